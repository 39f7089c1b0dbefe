import type { Schemas } from '@pipewright/types';
import type { Services } from '../../services/index.js';
import { principalOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

export function accountRoutes({ accounts }: Services): Handlers {
  return {
    getCurrentAccount(_req, res) {
      res.json(accounts.getCurrent(principalOf(res)));
    },
    listAccounts(req, res) {
      res.json(accounts.list(principalOf(res), pageRequest(req)));
    },
    createAccount(req, res) {
      res.status(201).json(accounts.create(principalOf(res), req.body as Schemas['AccountData']));
    },
    getAccount(req, res) {
      res.json(accounts.get(principalOf(res), req.params.id as string));
    },
    disableAccount(req, res) {
      res.json(accounts.disable(principalOf(res), req.params.id as string));
    },
    enableAccount(req, res) {
      res.json(accounts.enable(principalOf(res), req.params.id as string));
    },
  };
}
