import type { Schemas } from '@pipewright/types';
import type { Services } from '../../services/index.js';
import { principalOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

export function apiKeyRoutes({ apiKeys }: Services): Handlers {
  return {
    listApiKeys(req, res) {
      const accountId = req.query.account_id as string | undefined;
      res.json(apiKeys.list(principalOf(res), accountId, pageRequest(req)));
    },
    createApiKey(req, res) {
      res.status(201).json(apiKeys.create(principalOf(res), req.body as Schemas['ApiKeyData']));
    },
    getApiKey(req, res) {
      res.json(apiKeys.get(principalOf(res), req.params.id as string));
    },
    revokeApiKey(req, res) {
      apiKeys.revoke(principalOf(res), req.params.id as string);
      res.status(204).end();
    },
  };
}
