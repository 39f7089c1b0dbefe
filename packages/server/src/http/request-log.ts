import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../logger.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** One log line per request: method, route, status, duration and request id. */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    // As it came: a HEAD is served as a GET further on.
    const { method } = req;
    // The raw header and setHeader: Express's get and set normalize names and values first.
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    res.on('finish', () => {
      const route = (req as { openapi?: { openApiRoute?: string } }).openapi?.openApiRoute;
      logger.info('request', {
        request_id: requestId,
        method,
        route: route ?? req.path,
        status: res.statusCode,
        duration_ms: performance.now() - started,
      });
    });
    next();
  };
}
