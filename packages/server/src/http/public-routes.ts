import type { Request } from 'express';
import { templatePattern } from './methods.js';
import { specOperations } from './spec-operations.js';

/**
 * Whether a request is for an operation the spec declares public (an empty `security`): the
 * deliveries of webhooks, which carry no API key but the webhook's identifier in their path and
 * its signature. Matched by method and path, before the validator routes the request.
 */
export function publicRoutes(document: Record<string, unknown>): (req: Request) => boolean {
  const routes = specOperations(document)
    .filter((operation) => operation.public)
    .map(({ method, path }) => ({ method: method.toUpperCase(), pattern: templatePattern(`/v0${path}`) }));
  return (req) => routes.some(({ method, pattern }) => req.method === method && pattern.test(req.path));
}

/**
 * The rate-limit bucket of a request without a key: its path with each segment decoded and no
 * trailing slash, so that every spelling of one webhook's path counts against the same bucket.
 */
export function pathBucket(path: string): string {
  const segments = path.split('/').map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  });
  if (segments.length > 1 && segments.at(-1) === '') segments.pop();
  return `path ${segments.join('/')}`;
}
