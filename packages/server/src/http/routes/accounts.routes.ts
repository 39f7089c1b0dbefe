import type { Schemas } from '@pipewright/types';
import type { Services } from '../../services/index.js';
import { principalOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

export function accountRoutes({ accounts }: Services): Handlers {
  return {
    async getCurrentAccount(_req, res) {
      res.json(await accounts.getCurrent(principalOf(res)));
    },
    async listAccounts(req, res) {
      res.json(await accounts.list(principalOf(res), pageRequest(req)));
    },
    async createAccount(req, res) {
      res.status(201).json(await accounts.create(principalOf(res), req.body as Schemas['AccountData']));
    },
    async getAccount(req, res) {
      res.json(await accounts.get(principalOf(res), req.params.id as string));
    },
    async disableAccount(req, res) {
      res.json(await accounts.disable(principalOf(res), req.params.id as string));
    },
    async enableAccount(req, res) {
      res.json(await accounts.enable(principalOf(res), req.params.id as string));
    },
  };
}
