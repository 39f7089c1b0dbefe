import { createRequire } from 'node:module';
import { openapiDocument } from '@pipewright/types';
import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { SPECS_SCHEMA_POINTER } from '../services/index.js';

type Document = Parameters<typeof OpenApiValidator.middleware>[0]['apiSpec'];

type PathToRegexp = (path: string, options?: Record<string, unknown>) => unknown;

/**
 * express-openapi-validator finds a request's route by compiling the path pattern of every
 * route of the spec, on every request (its lookupRoute calls path-to-regexp in a loop), and
 * compiling a pattern costs far more than matching it. Patterns never change, so each is
 * compiled once. The compiled regexps have no global flag: sharing them is safe.
 *
 * No option of the validator does this, and nothing can stand in front of its lookup, so this
 * replaces the `pathToRegexp` export of the path-to-regexp module the validator requires: it
 * reads that export at each call. That is the validator's private working, pinned with its
 * version by test/unit/http/validator-route-cache.test.ts, which fails on any upgrade. The patch can
 * go once the validator caches compiled routes itself (cdimascio/express-openapi-validator#1217).
 */
function compileRoutePatternsOnce(): void {
  const validatorRequire = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
  const library = validatorRequire('path-to-regexp') as { pathToRegexp: PathToRegexp & { once?: true } };
  if (library.pathToRegexp.once) return;
  const compile = library.pathToRegexp;
  const compiled = new Map<string, unknown>();
  const once: PathToRegexp & { once?: true } = (path, options = {}) => {
    // Other code in the process may call the export too: every option it may pass is part of the key.
    const { sensitive, strict, end, trailing, delimiter } = options;
    const key = `${sensitive}|${strict}|${end}|${trailing}|${delimiter}|${path}`;
    let result = compiled.get(key);
    if (result === undefined) {
      result = compile(path, options);
      compiled.set(key, result);
    }
    return result;
  };
  once.once = true;
  library.pathToRegexp = once;
}

/** Replaces the schema at `pointer` (into `document`) by one that accepts anything. */
function acceptAnythingAt(document: Record<string, unknown>, pointer: string): void {
  const tokens = pointer
    .split('/')
    .slice(1)
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = tokens.pop() as string;
  const parent = tokens.reduce<Record<string, unknown> | undefined>(
    (node, token) => node?.[token] as Record<string, unknown> | undefined,
    document,
  );
  if (!parent || !(last in parent)) throw new Error(`the spec has no schema at ${pointer}`);
  parent[last] = {};
}

/**
 * Validates every request against the spec (all problems at once, unknown query
 * parameters rejected), and every response too when asked (the tests do).
 * Authentication is ours (http/authenticate.ts), so the validator skips security.
 * `deferred` points at schemas whose values a service validates itself, together with
 * what no schema can say: the validator accepts anything there.
 */
export function openapiValidator(
  document: Record<string, unknown>,
  validateResponses: boolean,
  deferred: readonly string[] = [],
): RequestHandler[] {
  compileRoutePatternsOnce();
  const apiSpec = structuredClone(document);
  for (const pointer of deferred) acceptAnythingAt(apiSpec, pointer);
  return OpenApiValidator.middleware({
    apiSpec: apiSpec as Document,
    validateApiSpec: false,
    validateRequests: { allErrors: true, allowUnknownQueryParameters: false },
    validateResponses: validateResponses ? { allErrors: true } : false,
    validateSecurity: false,
    ignoreUndocumented: false,
    // The spec has no cycle of references: dereferenced whole, its schemas need no resolution
    // by ajv while the validator prepares them, which halves the server's time to its first
    // answer (bench/README.md, stall).
    $refParser: { mode: 'dereference' },
  }) as RequestHandler[];
}

/** The validator of API v0 as the app sets it up: resource specs are checked by their type. */
export function apiValidator(validateResponses: boolean): RequestHandler[] {
  return openapiValidator(openapiDocument, validateResponses, [SPECS_SCHEMA_POINTER]);
}
