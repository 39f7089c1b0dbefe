import { createRequire } from 'node:module';
import { openapiDocument } from '@pipewright/types';
import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { SPECS_SCHEMA_POINTER } from '../services/index.js';

type Document = Parameters<typeof OpenApiValidator.middleware>[0]['apiSpec'];

type PathToRegexp = (path: string, options?: Record<string, unknown>) => unknown;

/** `require` as the validator's own modules resolve: its private modules and its dependencies. */
const validatorRequire = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));

/**
 * express-openapi-validator finds a request's route by compiling the path pattern of every
 * route of the spec, on every request (its lookupRoute calls path-to-regexp in a loop), and
 * compiling a pattern costs far more than matching it. Patterns never change, so each is
 * compiled once. The compiled regexps have no global flag: sharing them is safe.
 *
 * No option of the validator does this, and nothing can stand in front of its lookup, so this
 * replaces the `pathToRegexp` export of the path-to-regexp module the validator requires: it
 * reads that export at each call. That is the validator's private working, pinned with its
 * version by test/unit/http/validator-patches.test.ts, which fails on any upgrade. The patch can
 * go once the validator caches compiled routes itself (cdimascio/express-openapi-validator#1217).
 */
function compileRoutePatternsOnce(): void {
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

interface SpecCheckerOptions {
  version: string;
  validateApiSpec: boolean;
}
type SpecChecker = new (
  options: SpecCheckerOptions,
) => { validate(document: unknown): { errors: unknown[] } };

/**
 * The validator builds a checker of the spec against OpenAPI's own schema even when told not to
 * check the spec (`validateApiSpec: false`), and only uses it when told to: compiling that
 * schema with ajv was a quarter of the server's time to listening (bench/README.md, stall).
 * Our spec is checked where it is built (openapi/, by Redocly's lint), so the validator's
 * checker is built only when asked for. Like the route cache above, this replaces an export the
 * validator reads at each call, pinned by test/unit/http/validator-patches.test.ts.
 */
function buildSpecCheckerOnlyWhenAsked(): void {
  const library = validatorRequire('./framework/openapi.schema.validator.js') as {
    OpenAPISchemaValidator: SpecChecker & { onlyWhenAsked?: true };
  };
  if (library.OpenAPISchemaValidator.onlyWhenAsked) return;
  const Checker = library.OpenAPISchemaValidator;
  // The validator calls it with `new`: a class, which answers with the real checker when asked.
  class OnlyWhenAsked {
    static readonly onlyWhenAsked = true;
    constructor(options: SpecCheckerOptions) {
      // biome-ignore lint/correctness/noConstructorReturn: `new` must give the validator's own checker then.
      if (options.validateApiSpec) return new Checker(options);
    }
    validate(_document: unknown): { errors: unknown[] } {
      throw new Error('the spec checker was used with validateApiSpec: false');
    }
  }
  library.OpenAPISchemaValidator = OnlyWhenAsked;
}

type AjvCacheUse = ((ajv: unknown, schema: Record<string, unknown>, key: string) => unknown) & {
  alone?: true;
};

/** True if a `$ref` is anywhere in `value`. */
function holdsReference(value: unknown, seen = new Set<object>()): boolean {
  if (typeof value !== 'object' || value === null || seen.has(value)) return false;
  seen.add(value);
  if (!Array.isArray(value) && Object.hasOwn(value, '$ref')) return true;
  return Object.values(value).some((child) => holdsReference(child, seen));
}

/**
 * Each schema the validator compiles for a route (its parameters, its body, each response)
 * carries the spec's whole `paths` and `components` along, for ajv to resolve `$ref`s against,
 * and ajv walks all of it at each compilation: 70-100 ms per route, paid by the route's first
 * request while every other request waits (bench/README.md, stall). The spec is dereferenced
 * whole (see `$refParser` below), so a route's schema holding no `$ref` is compiled alone:
 * 12-16 ms. Like the patches above, this replaces an export the validator reads at each call,
 * pinned by test/unit/http/validator-patches.test.ts.
 */
function compileRouteSchemasAlone(): void {
  const library = validatorRequire('./middlewares/util.js') as { useAjvCache: AjvCacheUse };
  if (library.useAjvCache.alone) return;
  const use = library.useAjvCache;
  const alone: AjvCacheUse = (ajv, schema, key) => {
    const { paths: _paths, components: _components, ...route } = schema;
    return use(ajv, holdsReference(route) ? schema : route, key);
  };
  alone.alone = true;
  library.useAjvCache = alone;
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
  buildSpecCheckerOnlyWhenAsked();
  compileRouteSchemasAlone();
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
