import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openapiValidator } from '../../../src/http/validator.js';

// http/validator.ts patches three exports that express-openapi-validator reads at each call: the
// `pathToRegexp` of the path-to-regexp module it requires, so that each route pattern is
// compiled once; its own `OpenAPISchemaValidator`, so that OpenAPI's schema is compiled only
// when the spec is to be checked; and its own `useAjvCache`, so that a route's schemas are
// compiled without the whole spec. That relies on the validator's private workings; this test
// pins them, so that any upgrade of either package fails here first. Whoever upgrades checks
// that the patches still apply (or that the validator now does the same itself, and a patch can
// go) and moves the pins.

const PINNED_VERSIONS = { 'express-openapi-validator': '5.6.2', 'path-to-regexp': '8.4.2' };

const serverRequire = createRequire(import.meta.url);
const validatorEntry = serverRequire.resolve('express-openapi-validator');
const validatorRequire = createRequire(validatorEntry);
const lookupModule = join(dirname(validatorEntry), 'middlewares/openapi.metadata.js');
const frameworkModule = join(dirname(validatorEntry), 'framework/index.js');
const specCheckerModule = join(dirname(validatorEntry), 'framework/openapi.schema.validator.js');
const utilModule = join(dirname(validatorEntry), 'middlewares/util.js');
const requestModule = join(dirname(validatorEntry), 'middlewares/openapi.request.validator.js');
const responseModule = join(dirname(validatorEntry), 'middlewares/openapi.response.validator.js');

/** The `package.json` above a resolved entry file: path-to-regexp does not export its own. */
function manifestAbove(file: string, name: string): { name: string; version: string } {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      if (manifest.name === name) return manifest;
    } catch {
      // No package.json in this directory: look further up.
    }
  }
  throw new Error(`no package.json of ${name} above ${file}`);
}

interface PathToRegexpModule {
  pathToRegexp: ((path: string, options?: object) => { regexp: RegExp; keys: { name: string }[] }) & {
    once?: true;
  };
}

describe('the patches of http/validator.ts', () => {
  it('is written for the installed versions of express-openapi-validator and path-to-regexp', () => {
    const installed = {
      'express-openapi-validator': manifestAbove(validatorEntry, 'express-openapi-validator').version,
      'path-to-regexp': manifestAbove(validatorRequire.resolve('path-to-regexp'), 'path-to-regexp').version,
    };
    expect(installed).toEqual(PINNED_VERSIONS);
  });

  it('patches the very module whose export the route lookup reads at each call', () => {
    const source = readFileSync(lookupModule, 'utf8');
    expect(source).toContain('const path_to_regexp_1 = require("path-to-regexp");');
    expect(source).toContain('(0, path_to_regexp_1.pathToRegexp)(expressRoute, pathOpts)');
    expect(createRequire(lookupModule).resolve('path-to-regexp')).toBe(
      validatorRequire.resolve('path-to-regexp'),
    );
  });

  it('replaces a writable export by one that compiles each pattern and options once', () => {
    const library = validatorRequire('path-to-regexp') as PathToRegexpModule;
    expect(Object.getOwnPropertyDescriptor(library, 'pathToRegexp')).toMatchObject({ writable: true });

    openapiValidator({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} }, false);

    expect(library.pathToRegexp.once).toBe(true);
    const options = { sensitive: false, strict: false };
    const compiled = library.pathToRegexp('/v0/projects/id/:id', options);
    expect(library.pathToRegexp('/v0/projects/id/:id', { ...options })).toBe(compiled);
    expect(library.pathToRegexp('/v0/projects/id/:id', { sensitive: true, strict: false })).not.toBe(
      compiled,
    );
    expect(compiled.keys.map((key) => key.name)).toEqual(['id']);
    expect(compiled.regexp.exec('/v0/projects/id/p1')?.slice(1)).toEqual(['p1']);
    expect(compiled.regexp.flags).not.toContain('g');
  });

  it('builds the checker of the spec only where the validator uses it: when told to check the spec', () => {
    const source = readFileSync(frameworkModule, 'utf8');
    expect(source).toContain('const openapi_schema_validator_1 = require("./openapi.schema.validator");');
    expect(source).toContain('const validator = new openapi_schema_validator_1.OpenAPISchemaValidator({');
    expect(source).toMatch(
      /if \(validateApiSpec\) {\s+const apiDocValidation = validator\.validate\(apiDoc\);/,
    );
    expect(source.match(/validator\.validate\(/g)).toHaveLength(1);
  });

  it("replaces the checker by one that compiles OpenAPI's schema only when asked to check", () => {
    const library = validatorRequire(specCheckerModule) as {
      OpenAPISchemaValidator: new (options: {
        version: string;
        validateApiSpec: boolean;
      }) => {
        validate(document: unknown): { errors: unknown[] };
      };
    };
    expect(Object.getOwnPropertyDescriptor(library, 'OpenAPISchemaValidator')).toMatchObject({
      writable: true,
    });

    openapiValidator({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} }, false);

    const unchecked = new library.OpenAPISchemaValidator({ version: '3.1.0', validateApiSpec: false });
    expect(() => unchecked.validate({})).toThrow('validateApiSpec: false');
    const checker = new library.OpenAPISchemaValidator({ version: '3.1.0', validateApiSpec: true });
    expect(
      checker.validate({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} }).errors,
    ).toEqual([]);
    expect(checker.validate({ openapi: '3.1.0', paths: 'none' }).errors).not.toEqual([]);
  });

  it("compiles every route's schemas through the one export it reads at each call", () => {
    const request = readFileSync(requestModule, 'utf8');
    expect(request).toContain('const util_1 = require("./util");');
    expect(request).toContain(
      'this.validatorGeneral = (0, util_1.useAjvCache)(ajv.general, this.schemaGeneral, ajvCacheKey);',
    );
    expect(request).toContain(
      'this.validatorBody = (0, util_1.useAjvCache)(ajv.body, this.schemaBody, ajvCacheKey);',
    );
    const response = readFileSync(responseModule, 'utf8');
    expect(response).toContain('const util_1 = require("./util");');
    expect(response).toContain('const validator = (0, util_1.useAjvCache)(this.ajvBody, schema,');
    for (const source of [request, response]) {
      expect(source.match(/\.compile\(|\.addSchema\(|\.validate\(/g) ?? []).toEqual([]);
    }
  });

  it("replaces that export by one that leaves the spec's paths and components out where no $ref needs them", () => {
    const library = validatorRequire(utilModule) as {
      useAjvCache: (ajv: unknown, schema: Record<string, unknown>, key: string) => unknown;
    };
    expect(Object.getOwnPropertyDescriptor(library, 'useAjvCache')).toMatchObject({ writable: true });

    openapiValidator({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} }, false);

    const added = new Map<string, Record<string, unknown>>();
    const ajv = {
      getSchema: (key: string) => added.get(key),
      addSchema: (schema: Record<string, unknown>, key: string) => added.set(key, schema),
    };
    const whole = { paths: { '/a': {} }, components: { schemas: { A: { type: 'string' } } } };
    const alone = { properties: { body: { type: 'object', properties: { a: { type: 'string' } } } } };
    expect(library.useAjvCache(ajv, { ...whole, ...alone }, 'alone')).toEqual(alone);
    const referring = { ...whole, properties: { body: { items: [{ $ref: '#/components/schemas/A' }] } } };
    expect(library.useAjvCache(ajv, referring, 'referring')).toBe(referring);
  });
});
