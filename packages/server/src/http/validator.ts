import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';

type Document = Parameters<typeof OpenApiValidator.middleware>[0]['apiSpec'];

/**
 * Validates every request against the spec (all problems at once, unknown query
 * parameters rejected), and every response too when asked (the tests do).
 * Authentication is ours (http/authenticate.ts), so the validator skips security.
 */
export function openapiValidator(
  document: Record<string, unknown>,
  validateResponses: boolean,
): RequestHandler[] {
  return OpenApiValidator.middleware({
    apiSpec: structuredClone(document) as Document,
    validateApiSpec: false,
    validateRequests: { allErrors: true, allowUnknownQueryParameters: false },
    validateResponses: validateResponses ? { allErrors: true } : false,
    validateSecurity: false,
    ignoreUndocumented: false,
  }) as RequestHandler[];
}
