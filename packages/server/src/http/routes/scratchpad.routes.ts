import type { Services } from '../../services/index.js';
import { projectOf } from '../context.js';
import type { Handlers } from '../dispatch.js';

export function scratchpadRoutes({ scratchpad }: Services): Handlers {
  return {
    getScratchpad(req, res) {
      res.json(scratchpad.entries(projectOf(res), req.params.id as string));
    },
    clearScratchpad(req, res) {
      scratchpad.clear(projectOf(res), req.params.id as string);
      res.status(204).end();
    },
    getScratchpadEntry(req, res) {
      const value = scratchpad.get(projectOf(res), req.params.id as string, req.params.key as string);
      res.type('text/plain; charset=utf-8').send(value);
    },
    setScratchpadEntry(req, res) {
      scratchpad.set(projectOf(res), req.params.id as string, req.params.key as string, req.body as string);
      res.status(204).end();
    },
    deleteScratchpadEntry(req, res) {
      scratchpad.delete(projectOf(res), req.params.id as string, req.params.key as string);
      res.status(204).end();
    },
  };
}
