import type { RequestHandler } from 'express';
import { DomainError } from '../domain/errors.js';
import { principalIfAny } from './context.js';

/**
 * While the server stops, answers 503 service_unavailable with `Connection: close`, so that
 * clients retry elsewhere or later and drop their connection. The keys of running tasks are
 * still served: their tasks may finish until the stop deadline, and their steps call the API
 * (the scratchpad, events) to do so. Runs after authentication, which tells those keys apart;
 * requests without a key (webhook deliveries) are refused too.
 */
export function refuseWhileStopping(isStopping: () => boolean): RequestHandler {
  return (_req, res, next) => {
    if (!isStopping() || principalIfAny(res)?.projectId) return next();
    res.set('Connection', 'close');
    throw new DomainError('service_unavailable', 'the server is stopping; retry on another or later');
  };
}
