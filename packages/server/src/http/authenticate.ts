import type { Request, RequestHandler } from 'express';
import { DomainError } from '../domain/errors.js';
import type { Services } from '../services/index.js';

const BEARER = /^Bearer +(\S+) *$/i;

/** The API key of `Authorization: Bearer <API key>`, if the header has that form. */
export const bearerKey = (req: Request): string | undefined =>
  BEARER.exec(req.headers.authorization ?? '')?.[1];

/**
 * Every request needs `Authorization: Bearer <API key>`, /status included, but those of the
 * public routes (`isPublic`: webhook deliveries), which get no principal.
 */
export function authenticate(
  auth: Services['auth'],
  isPublic: (req: Request) => boolean = () => false,
): RequestHandler {
  return async (req, res, next) => {
    if (isPublic(req)) return next();
    const key = bearerKey(req);
    if (!key) {
      throw new DomainError(
        'authentication_required',
        'an API key is required: send Authorization: Bearer <key>',
      );
    }
    res.locals.principal = await auth.authenticate(key);
    next();
  };
}
