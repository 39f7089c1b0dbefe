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
    getAccount(req, res) {
      res.json(accounts.get(principalOf(res), req.params.id as string));
    },
  };
}
