import type { Schemas } from '@pipewright/types';
import { Router } from 'express';
import type { Services } from '../../services/index.js';
import { principalOf, projectOf } from '../context.js';
import { pageRequest } from '../pagination.js';

export function commandRoutes({ commands }: Services): Router {
  return Router()
    .post('/commands/id/:id/execute', function executeCommand(req, res) {
      const body = req.body as Schemas['CommandInvocation'];
      const execution = commands.execute(
        principalOf(res),
        projectOf(res),
        req.params.id as string,
        body.parameters ?? {},
      );
      res.status(201).json(execution);
    })
    .get('/command_executions', function listCommandExecutions(req, res) {
      const command = req.query.command as string | undefined;
      res.json(commands.list(projectOf(res), command, pageRequest(req)));
    })
    .get('/command_executions/id/:id', function getCommandExecution(req, res) {
      res.json(commands.get(projectOf(res), req.params.id as string));
    });
}
