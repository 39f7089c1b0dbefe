import type { Schemas } from '@pipewright/types';
import type { Services } from '../../services/index.js';
import { principalOf, projectOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

type IdentitySpec = Schemas['IdentitySpec'];

export function identityRoutes({ identities }: Services): Handlers {
  return {
    listIdentities(req, res) {
      res.json(identities.list(projectOf(res), pageRequest(req)));
    },
    createIdentity(req, res) {
      res.status(201).json(identities.create(principalOf(res), projectOf(res), req.body as IdentitySpec));
    },
    getIdentity(req, res) {
      res.json(identities.get(projectOf(res), req.params.id as string));
    },
    getIdentityByName(req, res) {
      res.json(identities.getByName(projectOf(res), req.params.name as string));
    },
    updateIdentity(req, res) {
      const spec = req.body as IdentitySpec;
      res.json(identities.update(principalOf(res), projectOf(res), req.params.id as string, spec));
    },
    deleteIdentity(req, res) {
      identities.delete(principalOf(res), projectOf(res), req.params.id as string);
      res.status(204).end();
    },
  };
}
