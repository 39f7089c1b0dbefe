import type { Schemas } from '@pipewright/types';
import type { Services } from '../../services/index.js';
import { principalOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

export function apiKeyRoutes({ apiKeys }: Services): Handlers {
  return {
    async listApiKeys(req, res) {
      const accountId = req.query.account_id as string | undefined;
      res.json(await apiKeys.list(principalOf(res), accountId, pageRequest(req)));
    },
    async createApiKey(req, res) {
      res.status(201).json(await apiKeys.create(principalOf(res), req.body as Schemas['ApiKeyData']));
    },
    async getApiKey(req, res) {
      res.json(await apiKeys.get(principalOf(res), req.params.id as string));
    },
    async revokeApiKey(req, res) {
      await apiKeys.revoke(principalOf(res), req.params.id as string);
      res.status(204).end();
    },
  };
}
