import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { openapiDocument } from '@pipewright/types';
import express, { type ErrorRequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { specOperations } from '../../../src/http/spec-operations.js';
import { apiValidator } from '../../../src/http/validator.js';
import { compileValidatorsAhead } from '../../../src/http/validator-warm-up.js';

// Every schema the validator compiles goes through the export `useAjvCache` of its util module
// (pinned by validator-patches.test.ts): counting its calls counts compilations.
const validatorRequire = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
const util = validatorRequire('./middlewares/util.js') as {
  useAjvCache: (ajv: { getSchema(key: string): unknown }, schema: unknown, key: string) => unknown;
};

const app = express();
const validator = apiValidator(false);
app.use(express.json(), express.text());
app.use(validator);
app.use((_req, res) => {
  res.status(204).end();
});
const answerError: ErrorRequestHandler = (error, _req, res, _next) => {
  res.status((error as { status?: number }).status ?? 500).end();
};
app.use(answerError);

let compiled = 0;
let baseUrl = '';
let server: Server;

beforeAll(async () => {
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const use = util.useAjvCache;
  // Counted only when the schema is not in ajv's cache yet: a compilation.
  util.useAjvCache = (ajv, schema, key) => {
    if (!ajv.getSchema(key)) compiled += 1;
    return use(ajv, schema, key);
  };
  return () => {
    util.useAjvCache = use;
  };
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const send = (method: string, path: string, type?: string) =>
  fetch(`${baseUrl}/v0${path.replace(/\{[^}]+\}/g, 'x')}`, {
    method,
    ...(type === undefined
      ? {}
      : { headers: { 'content-type': type }, body: type.includes('json') ? '{}' : 'x' }),
  });

describe('compiling the validators ahead', () => {
  it("compiles every operation's validators, so that no first request compiles any", async () => {
    await compileValidatorsAhead(app, validator, openapiDocument);
    expect(compiled).toBeGreaterThan(0);

    compiled = 0;
    const operations = specOperations(openapiDocument);
    for (const { method, path, bodyTypes } of operations) {
      for (const type of bodyTypes.length > 0 ? bodyTypes : [undefined]) {
        const response = await send(method.toUpperCase(), path, type);
        // Answered by the validator (400: made-up parameters) or past it (204), never by a failure.
        expect([204, 400], `${method} ${path}`).toContain(response.status);
      }
    }
    expect(compiled).toBe(0);

    // A media type not compiled ahead still is at its first request: the count would see it.
    const body = operations.find((operation) => operation.bodyTypes.includes('application/json'));
    await send(body?.method.toUpperCase() ?? '', body?.path ?? '', 'application/json; charset=utf-8');
    expect(compiled).toBeGreaterThan(0);
  });

  it('leaves validation as it was: a valid request passes, an invalid one is refused', async () => {
    expect((await fetch(`${baseUrl}/v0/status`)).status).toBe(204);
    expect((await fetch(`${baseUrl}/v0/projects?size=not-a-number`)).status).toBe(400);
  });
});
