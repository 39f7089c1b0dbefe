import { Router } from 'express';
import type { Status } from '../../domain/execution.js';
import type { Services } from '../../services/index.js';
import { projectOf } from '../context.js';
import { pageRequest } from '../pagination.js';

export function pipelineRoutes({ pipelines }: Services): Router {
  return Router()
    .get('/pipelines', function listPipelines(req, res) {
      res.json(pipelines.list(projectOf(res), req.query.status as Status | undefined, pageRequest(req)));
    })
    .get('/pipelines/id/:id', function getPipeline(req, res) {
      res.json(pipelines.get(projectOf(res), req.params.id as string));
    })
    .post('/pipelines/id/:id/abort', function abortPipeline(req, res) {
      pipelines.abort(projectOf(res), req.params.id as string);
      res.status(204).end();
    })
    .post('/pipelines/id/:id/restart', function restartPipeline(req, res) {
      pipelines.restart(projectOf(res), req.params.id as string);
      res.status(204).end();
    })
    .post('/pipelines/id/:id/restart_from_failure', function restartPipelineFromFailure(req, res) {
      pipelines.restartFromFailure(projectOf(res), req.params.id as string);
      res.status(204).end();
    });
}
