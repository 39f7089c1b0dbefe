import { isUtf8 } from 'node:buffer';
import express, { type Request, type RequestHandler, Router } from 'express';
import { DomainError, invalidRequestBody } from '../domain/errors.js';
import { pointer } from '../domain/json-pointer.js';
import { specOperations } from './spec-operations.js';

/**
 * How deep arrays and objects may nest in a JSON body. Parsing any depth is cheap, but the
 * services store and echo bodies with JSON.stringify, which recurses: a body nested some
 * thousands of levels deep would exhaust the stack there.
 */
const MAX_JSON_DEPTH = 100;

type Method = 'post' | 'put' | 'patch' | 'delete';

/** The routes whose operation takes a JSON body, in Express's syntax (`/v0/projects/id/:id`). */
function jsonBodyRoutes(document: Record<string, unknown>): { method: Method; path: string }[] {
  return specOperations(document)
    .filter((operation) => operation.bodyTypes.includes('application/json'))
    .map(({ method, path }) => ({
      method: method as Method,
      path: `/v0${path.replace(/\{([^}]+)\}/g, ':$1')}`,
    }));
}

/** The bytes of each JSON body as they came, kept while its request lives. */
const rawBodies = new WeakMap<Request, Buffer>();

/** The bytes of the request's JSON body: a webhook's signature is computed over them, not the parsed value. */
export function rawJsonBody(req: Request): Buffer | undefined {
  return rawBodies.get(req);
}

/**
 * Refuses what JSON.parse would silently repair (body-parser decodes bad bytes as U+FFFD), and
 * keeps the bytes.
 */
function verifyBody(req: Request, _res: unknown, body: Buffer, encoding: string): void {
  if (encoding === 'utf-8' && !isUtf8(body)) {
    throw new DomainError('invalid_json', 'the request body is not valid UTF-8');
  }
  rawBodies.set(req, body);
}

/** The pointer of the first array or object nested deeper than MAX_JSON_DEPTH, if any. */
function tooDeep(body: unknown): string | undefined {
  const isContainer = (value: unknown): value is object => typeof value === 'object' && value !== null;
  if (!isContainer(body)) return undefined;
  const pending = [{ value: body, depth: 1, at: '' }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, depth, at } = next;
    if (depth > MAX_JSON_DEPTH) return at;
    for (const [key, child] of Object.entries(value)) {
      if (isContainer(child)) pending.push({ value: child, depth: depth + 1, at: pointer(at, key) });
    }
  }
  return undefined;
}

const rejectDeepNesting: RequestHandler = (req, _res, next) => {
  const at = tooDeep(req.body);
  if (at === undefined) return next();
  throw invalidRequestBody([
    { pointer: at, reason: `nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep` },
  ]);
};

/**
 * Parses JSON bodies, strict UTF-8 and at most MAX_JSON_DEPTH deep, on the routes whose
 * operation takes one. A body sent anywhere else is ignored, as HTTP allows: reading it
 * could only produce answers (413, 415, invalid_json) that those operations do not have.
 */
export function jsonBodies(document: Record<string, unknown>, limitBytes: number): RequestHandler {
  const parse = express.json({ limit: limitBytes, verify: verifyBody });
  const router = Router();
  const routes = jsonBodyRoutes(document);
  for (const { method, path } of routes) router[method](path, parse, rejectDeepNesting);
  // Most requests (every GET) have no operation with a body: they skip matching each route.
  const methods = new Set(routes.map(({ method }) => method.toUpperCase()));
  return (req, res, next) => (methods.has(req.method) ? router(req, res, next) : next());
}
