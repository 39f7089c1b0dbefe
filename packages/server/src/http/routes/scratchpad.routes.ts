import { Router } from 'express';
import type { Services } from '../../services/index.js';
import { projectOf } from '../context.js';

export function scratchpadRoutes({ scratchpads }: Services): Router {
  return Router()
    .get('/pipelines/id/:id/scratchpad', function getScratchpad(req, res) {
      res.json(scratchpads.entries(projectOf(res), req.params.id as string));
    })
    .delete('/pipelines/id/:id/scratchpad', function clearScratchpad(req, res) {
      scratchpads.clear(projectOf(res), req.params.id as string);
      res.status(204).end();
    })
    .get('/pipelines/id/:id/scratchpad/key/:key', function getScratchpadEntry(req, res) {
      const value = scratchpads.get(projectOf(res), req.params.id as string, req.params.key as string);
      res.type('text/plain; charset=utf-8').send(value);
    })
    .put('/pipelines/id/:id/scratchpad/key/:key', function setScratchpadEntry(req, res) {
      scratchpads.set(projectOf(res), req.params.id as string, req.params.key as string, req.body as string);
      res.status(204).end();
    })
    .delete('/pipelines/id/:id/scratchpad/key/:key', function deleteScratchpadEntry(req, res) {
      scratchpads.delete(projectOf(res), req.params.id as string, req.params.key as string);
      res.status(204).end();
    });
}
