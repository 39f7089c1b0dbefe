import type { Status } from '../../domain/execution/statuses.js';
import { normalizeTime } from '../../domain/time.js';
import type { Services } from '../../services/index.js';
import { projectOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

export function pipelineRoutes({ pipelines }: Services): Handlers {
  return {
    async listPipelines(req, res) {
      const query = req.query as Record<string, string | undefined>;
      // Times are compared as stored: canonical UTC, whatever offset the client sent.
      const time = (value: string | undefined) => (value === undefined ? undefined : normalizeTime(value));
      const filters = {
        status: query.status as Status | undefined,
        eventId: query.event_id,
        name: query.name,
        triggerId: query.trigger_id,
        commandId: query.command_id,
        createdSince: time(query.creation_time_since),
        createdBefore: time(query.creation_time_before),
      };
      res.json(await pipelines.list(projectOf(res), filters, pageRequest(req)));
    },
    async getPipeline(req, res) {
      res.json(await pipelines.get(projectOf(res), req.params.id as string));
    },
    async abortPipeline(req, res) {
      await pipelines.abort(projectOf(res), req.params.id as string);
      res.status(204).end();
    },
    async restartPipeline(req, res) {
      await pipelines.restart(projectOf(res), req.params.id as string);
      res.status(204).end();
    },
    async restartPipelineFromFailure(req, res) {
      await pipelines.restartFromFailure(projectOf(res), req.params.id as string);
      res.status(204).end();
    },
  };
}
