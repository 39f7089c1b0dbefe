import type { RequestHandler } from 'express';
import { specOperations } from './spec-operations.js';

/** Route handlers by operationId: each is named after the operation it serves. */
export type Handlers = Record<string, RequestHandler>;

/**
 * Runs the handler of the operation the validator matched (route and method): handlers need
 * no routing of their own, and a request is not matched against every route twice. Every
 * operation of the spec must have its handler and every handler its operation, which is
 * checked once, when the app is made.
 */
export function dispatch(handlers: Handlers, document: Record<string, unknown>): RequestHandler {
  const ids = specOperations(document).map((operation) => operation.operationId);
  const missing = ids.filter((id) => !Object.hasOwn(handlers, id));
  const unknown = Object.keys(handlers).filter((id) => !ids.includes(id));
  if (missing.length > 0 || unknown.length > 0) {
    throw new Error(`handlers and spec differ: no handler for [${missing}], no operation for [${unknown}]`);
  }
  return (req, res, next) => {
    const { openapi } = req as {
      openapi?: { schema?: { operationId?: string }; pathParams?: Record<string, string> };
    };
    const operationId = openapi?.schema?.operationId;
    const handler = operationId === undefined ? undefined : handlers[operationId];
    if (!handler) return next();
    // Express gives each middleware layer its own params: the route's are the validator's.
    req.params = openapi?.pathParams ?? {};
    // The handler's promise goes back to Express, which passes its rejection to the error handler.
    return handler(req, res, next);
  };
}
