import express, { type RequestHandler } from 'express';
import { DomainError } from '../domain/errors.js';

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a raw text body whatever its Content-Type (clients label raw text
 * application/json too), checks that it is UTF-8 and presents it to the validator and the
 * route as the text/plain string it is.
 */
export function rawTextBody(limitBytes: number): RequestHandler {
  const raw = express.raw({ type: () => true, limit: limitBytes });
  return (req, res, next) => {
    raw(req, res, (error?: unknown) => {
      if (error) return next(error);
      const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      try {
        req.body = STRICT_UTF8.decode(bytes);
      } catch {
        return next(
          new DomainError('invalid_request_body', 'the value is not valid UTF-8 text', {
            jsv_errors: [{ pointer: '', reason: 'must be UTF-8 text' }],
          }),
        );
      }
      req.headers['content-type'] = 'text/plain; charset=utf-8';
      next();
    });
  };
}
