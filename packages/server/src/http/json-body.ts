import { isUtf8 } from 'node:buffer';
import express, { type Request, type RequestHandler, Router } from 'express';
import { DomainError, invalidRequestBody } from '../domain/errors.js';
import { pointer } from '../domain/json-pointer.js';
import { nextTurn } from '../services/index.js';
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

const isContainer = (value: unknown): value is object => typeof value === 'object' && value !== null;

/**
 * The keys leading to the first array or object nested deeper than MAX_JSON_DEPTH inside
 * `value` (at `depth`), innermost first, if any. Depth first, last member first; recursion
 * stops at the limit, so it never goes deeper than MAX_JSON_DEPTH calls. Every JSON body goes
 * through it: it makes no pointer, nor any array or object, but for the one reported.
 */
function keysTooDeep(value: object, depth: number): (string | number)[] | undefined {
  if (depth > MAX_JSON_DEPTH) return [];
  const members = Array.isArray(value) ? undefined : Object.keys(value);
  for (let i = (members ?? (value as unknown[])).length - 1; i >= 0; i--) {
    const key = members ? (members[i] as string) : i;
    const child = (value as Record<string | number, unknown>)[key];
    if (!isContainer(child)) continue;
    const keys = keysTooDeep(child, depth + 1);
    if (keys) {
      keys.push(key);
      return keys;
    }
  }
  return undefined;
}

/** The pointer of the first array or object nested deeper than MAX_JSON_DEPTH, if any. */
function tooDeep(body: unknown): string | undefined {
  const keys = isContainer(body) ? keysTooDeep(body, 1) : undefined;
  return keys && pointer('', ...keys.reverse());
}

/**
 * Bodies past this many bytes take turns: their parse and their depth check each hold the
 * thread some milliseconds (about 40 and 12 for 800 KiB here, bench/README.md, stall).
 */
const LARGE_BODY_BYTES = 64 * 1024;

const rejectDeepNesting: RequestHandler = async (req, _res, next) => {
  // Between the parse and the check, what waits runs: one request's body is not one long block.
  if ((rawJsonBody(req)?.length ?? 0) > LARGE_BODY_BYTES) await nextTurn();
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
