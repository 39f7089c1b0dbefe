import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../logger.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** One log line per request: method, route, status, duration and request id. */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const incoming = req.get('x-request-id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.set('X-Request-Id', requestId);
    res.on('finish', () => {
      const route = (req as { openapi?: { openApiRoute?: string } }).openapi?.openApiRoute;
      logger.info('request', {
        request_id: requestId,
        method: req.method,
        route: route ?? req.path,
        status: res.statusCode,
        duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
      });
    });
    next();
  };
}
