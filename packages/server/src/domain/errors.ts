import type { ErrorCode } from './error-codes.js';

/**
 * Every error a service raises on purpose. `code` is one of the stable codes of the table
 * of error codes, which the spec lists; only http/errors.ts turns it into its status and
 * the `{error, code, data}` body.
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** One problem found in a request body, located by a JSON pointer into it. */
export interface JsvError {
  pointer: string;
  reason: string;
}

export function invalidRequestBody(errors: JsvError[]): DomainError {
  const first = errors[0];
  const summary = first ? `${first.pointer || '/'}: ${first.reason}` : 'invalid request body';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return new DomainError('invalid_request_body', `invalid request body: ${summary}${more}`, {
    jsv_errors: errors,
  });
}
