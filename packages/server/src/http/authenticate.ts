import type { RequestHandler } from 'express';
import { DomainError } from '../domain/errors.js';
import type { Services } from '../services/index.js';

const BEARER = /^Bearer +(\S+) *$/i;

/** Every request needs `Authorization: Bearer <API key>`, /status included. */
export function authenticate(auth: Services['auth']): RequestHandler {
  return (req, res, next) => {
    const match = BEARER.exec(req.headers.authorization ?? '');
    if (!match?.[1]) {
      throw new DomainError(
        'authentication_required',
        'an API key is required: send Authorization: Bearer <key>',
      );
    }
    res.locals.principal = auth.authenticate(match[1]);
    next();
  };
}
