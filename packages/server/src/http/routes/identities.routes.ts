import type { Schemas } from '@pipewright/types';
import type { Services } from '../../services/index.js';
import { principalOf, projectOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

type IdentitySpec = Schemas['IdentitySpec'];

export function identityRoutes({ identities }: Services): Handlers {
  return {
    async listIdentities(req, res) {
      res.json(await identities.list(projectOf(res), pageRequest(req)));
    },
    async createIdentity(req, res) {
      res
        .status(201)
        .json(await identities.create(principalOf(res), projectOf(res), req.body as IdentitySpec));
    },
    async getIdentity(req, res) {
      res.json(await identities.get(projectOf(res), req.params.id as string));
    },
    async getIdentityByName(req, res) {
      res.json(await identities.getByName(projectOf(res), req.params.name as string));
    },
    async updateIdentity(req, res) {
      const spec = req.body as IdentitySpec;
      res.json(await identities.update(principalOf(res), projectOf(res), req.params.id as string, spec));
    },
    async deleteIdentity(req, res) {
      await identities.delete(principalOf(res), projectOf(res), req.params.id as string);
      res.status(204).end();
    },
  };
}
