import type { Schemas } from '@pipewright/types';
import type { Services } from '../../services/index.js';
import { principalOf, projectOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

export function commandRoutes({ commands }: Services): Handlers {
  return {
    async executeCommand(req, res) {
      const body = req.body as Schemas['CommandInvocation'];
      const execution = await commands.execute(
        principalOf(res),
        projectOf(res),
        req.params.id as string,
        body.parameters ?? {},
      );
      res.status(201).json(execution);
    },
    async listCommandExecutions(req, res) {
      const command = req.query.command as string | undefined;
      res.json(await commands.list(projectOf(res), command, pageRequest(req)));
    },
    async getCommandExecution(req, res) {
      res.json(await commands.get(projectOf(res), req.params.id as string));
    },
  };
}
