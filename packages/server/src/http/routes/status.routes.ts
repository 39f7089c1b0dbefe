import type { Handlers } from '../dispatch.js';

export function statusRoutes(): Handlers {
  return {
    headStatus(_req, res) {
      res.status(200).end();
    },
    getStatus(_req, res) {
      res.json({});
    },
  };
}
