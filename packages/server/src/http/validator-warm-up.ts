import type { Express, Request, RequestHandler, Response } from 'express';
import { nextTurn } from '../services/index.js';
import { specOperations } from './spec-operations.js';

/** A request of `method` to `url` with a body of `type` (none if undefined), as Express makes one for `app`. */
function madeUpRequest(app: Express, method: string, url: string, type: string | undefined): Request {
  // On the app's own prototype, as Express makes them: `path`, `query` and `app` read as for a real one.
  const request = Object.create(app.request) as Request;
  Object.assign(request, {
    method,
    url,
    originalUrl: url,
    baseUrl: '',
    params: {},
    headers: type === undefined ? {} : { 'content-type': type },
    body: undefined,
  });
  return request;
}

/** Runs `request` through `handlers` in turn, until one passes an error on (or none is left). */
async function through(handlers: readonly RequestHandler[], request: Request): Promise<void> {
  const response = {} as Response;
  for (const handler of handlers) {
    const error = await new Promise<unknown>((resolve) => {
      handler(request, response, resolve);
    });
    if (error !== undefined) return;
  }
}

/**
 * express-openapi-validator compiles the validators of a route (its method, path and body's
 * media type) at the route's first request, which waits for it, with every request behind it:
 * 12-60 ms (bench/README.md, stall). This compiles them ahead, an operation per turn of the
 * event loop, by passing `validator` (as `app` uses it) a request made up for each operation of
 * `document`, with each media type its body takes. What the validator makes of such a request
 * (its parameters are made up: it is mostly refused) does not matter; what it compiled stays.
 * Requests of other media types (`application/json; charset=utf-8`) still compile theirs at
 * their first request. Only for a validator that does not check responses, which would wait
 * for a response that never comes.
 */
export async function compileValidatorsAhead(
  app: Express,
  validator: readonly RequestHandler[],
  document: Record<string, unknown>,
): Promise<void> {
  for (const operation of specOperations(document)) {
    const url = `/v0${operation.path.replace(/\{[^}]+\}/g, 'x')}`;
    const types = operation.bodyTypes.length > 0 ? operation.bodyTypes : [undefined];
    for (const type of types) {
      await nextTurn();
      await through(validator, madeUpRequest(app, operation.method.toUpperCase(), url, type));
    }
  }
}
