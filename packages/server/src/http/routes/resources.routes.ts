import type { operations, Schemas } from '@pipewright/types';
import type { Request } from 'express';
import type { Services } from '../../services/index.js';
import { principalOf, projectOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

type ResourceType = Schemas['ResourceSpec']['type'];
type InstallQuery = NonNullable<operations['installResources']['parameters']['query']>;

/** A bare `?dry-run` (the empty string) and `?dry-run=true` ask for one. */
function isDryRun(req: Request): boolean {
  const value = (req.query as InstallQuery)['dry-run'];
  return value === '' || value === 'true';
}

export function resourceRoutes({ resources, nextTicks }: Services): Handlers {
  return {
    async installResources(req, res) {
      // Only the envelope has been validated: the service judges the specs, all together.
      const { specs } = req.body as { specs: unknown[] };
      await resources.install(principalOf(res), req.params.id as string, specs, { dryRun: isDryRun(req) });
      res.status(204).end();
    },
    async listResources(req, res) {
      const { type } = req.query as { type?: ResourceType };
      res.json(await resources.list(projectOf(res), type, pageRequest(req)));
    },
    async getResource(req, res) {
      res.json(await resources.get(projectOf(res), req.params.id as string));
    },
    async getResourceByTypeAndName(req, res) {
      const { type, name } = req.params as { type: ResourceType; name: string };
      res.json(await resources.getByTypeAndName(projectOf(res), type, name));
    },
    async getNextTicks(req, res) {
      // The validator has checked `count` is an integer from 1 to 100.
      const { count } = req.query as { count?: string };
      res.json(
        await nextTicks.get(projectOf(res), req.params.id as string, count === undefined ? 5 : Number(count)),
      );
    },
  };
}
