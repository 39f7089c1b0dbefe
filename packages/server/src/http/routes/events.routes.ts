import type { Schemas } from '@pipewright/types';
import type { Services } from '../../services/index.js';
import { principalOf, projectOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

export function eventRoutes({ events }: Services): Handlers {
  return {
    async createEvents(req, res) {
      // The project header is optional here: without it, triggers of every project answer.
      const project = res.locals.project as Schemas['Project'] | undefined;
      const created = await events.create(principalOf(res), project, req.body as Schemas['CustomEvent']);
      res.status(201).json(created);
    },
    async listEvents(req, res) {
      const query = req.query as Record<string, string | undefined>;
      const filters = { connector: query.connector, name: query.name, pipeline_id: query.pipeline_id };
      res.json(await events.list(projectOf(res), filters, pageRequest(req)));
    },
    async getEvent(req, res) {
      res.json(await events.get(projectOf(res), req.params.id as string));
    },
    async replayEvent(req, res) {
      res.status(201).json(await events.replay(projectOf(res), req.params.id as string));
    },
  };
}
