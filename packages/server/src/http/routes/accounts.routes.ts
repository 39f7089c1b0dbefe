import { Router } from 'express';
import type { Services } from '../../services/index.js';
import { principalOf } from '../context.js';
import { pageRequest } from '../pagination.js';

export function accountRoutes({ accounts }: Services): Router {
  return Router()
    .get('/account', function getCurrentAccount(_req, res) {
      res.json(accounts.getCurrent(principalOf(res)));
    })
    .get('/accounts', function listAccounts(req, res) {
      res.json(accounts.list(principalOf(res), pageRequest(req)));
    })
    .get('/accounts/id/:id', function getAccount(req, res) {
      res.json(accounts.get(principalOf(res), req.params.id as string));
    });
}
