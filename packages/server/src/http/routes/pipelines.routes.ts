import type { Status } from '../../domain/execution.js';
import type { Services } from '../../services/index.js';
import { projectOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

export function pipelineRoutes({ pipelines }: Services): Handlers {
  return {
    listPipelines(req, res) {
      const filters = {
        status: req.query.status as Status | undefined,
        eventId: req.query.event_id as string | undefined,
      };
      res.json(pipelines.list(projectOf(res), filters, pageRequest(req)));
    },
    getPipeline(req, res) {
      res.json(pipelines.get(projectOf(res), req.params.id as string));
    },
    abortPipeline(req, res) {
      pipelines.abort(projectOf(res), req.params.id as string);
      res.status(204).end();
    },
    restartPipeline(req, res) {
      pipelines.restart(projectOf(res), req.params.id as string);
      res.status(204).end();
    },
    restartPipelineFromFailure(req, res) {
      pipelines.restartFromFailure(projectOf(res), req.params.id as string);
      res.status(204).end();
    },
  };
}
