import type { Services } from '../../services/index.js';
import { projectOf } from '../context.js';
import type { Handlers } from '../dispatch.js';

export function scratchpadRoutes({ scratchpad }: Services): Handlers {
  return {
    async getScratchpad(req, res) {
      res.json(await scratchpad.entries(projectOf(res), req.params.id as string));
    },
    async clearScratchpad(req, res) {
      await scratchpad.clear(projectOf(res), req.params.id as string);
      res.status(204).end();
    },
    async getScratchpadEntry(req, res) {
      const value = await scratchpad.get(projectOf(res), req.params.id as string, req.params.key as string);
      res.type('text/plain; charset=utf-8').send(value);
    },
    async setScratchpadEntry(req, res) {
      await scratchpad.set(
        projectOf(res),
        req.params.id as string,
        req.params.key as string,
        req.body as string,
      );
      res.status(204).end();
    },
    async deleteScratchpadEntry(req, res) {
      await scratchpad.delete(projectOf(res), req.params.id as string, req.params.key as string);
      res.status(204).end();
    },
  };
}
