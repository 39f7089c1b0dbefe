import type { Status } from '../../domain/execution/statuses.js';
import type { Services } from '../../services/index.js';
import { projectOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

export function taskRoutes({ tasks }: Services): Handlers {
  return {
    async listTasks(req, res) {
      const query = req.query as Record<string, string | undefined>;
      const filters = { pipeline_id: query.pipeline_id, status: query.status as Status | undefined };
      res.json(await tasks.list(projectOf(res), filters, pageRequest(req)));
    },
    async getTask(req, res) {
      res.json(await tasks.get(projectOf(res), req.params.id as string));
    },
    async listStepExecutions(req, res) {
      const { run } = req.query as Record<string, string | undefined>;
      res.json(
        await tasks.steps(
          projectOf(res),
          req.params.id as string,
          run === undefined ? undefined : Number(run),
        ),
      );
    },
  };
}
