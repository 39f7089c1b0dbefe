import { Router } from 'express';

export function statusRoutes(): Router {
  return Router()
    .head('/status', function headStatus(_req, res) {
      res.status(200).end();
    })
    .get('/status', function getStatus(_req, res) {
      res.json({});
    });
}
