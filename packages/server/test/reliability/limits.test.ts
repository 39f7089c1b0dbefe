import type { Request, Response } from 'express';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimit } from '../../src/http/rate-limit.js';
import { sharedTestServer, startTestServer } from '../helpers/test-server.js';
import { recordFigures } from './figures.js';
import { createSender, type RawRequest, type Sender } from './http.js';
import { memoryAfterGc } from './memory.js';
import { type Answer, OPERATIONS, type Operation, specProblem } from './spec.js';
import { buildWorld, validRequest, type World } from './world.js';

// Limits: the body size (413), the per-key rate limit (429 with Retry-After, on by
// default), the header and URL sizes Node enforces, many connections at once.

const DEFAULT_BODY_LIMIT = 1024 * 1024;
const SCRATCHPAD_LIMIT = 65_536;
const tally = { requests: 0, failures5xx: 0 };

// Every default of createApp: body limit and rate limit included.
const server = sharedTestServer({ rateLimit: undefined });
let world: World;
let sender: Sender;

beforeAll(async () => {
  world = await buildWorld(server, server.adminKey);
  sender = createSender(server);
});

afterAll(async () => {
  recordFigures('limits', tally);
  await sender.close();
});

async function send(raw: RawRequest, using: Sender = sender): Promise<Answer> {
  tally.requests += 1;
  const answer = await using.send(raw);
  if (answer.status >= 500) tally.failures5xx += 1;
  return answer;
}

const operation = (id: string) => OPERATIONS.find((o) => o.id === id) as Operation;
const codeOf = (answer: Answer) => (JSON.parse(answer.text) as { code: string }).code;

/** A body of exactly `bytes` bytes: JSON the schema refuses (an unknown member), padded. */
function refusedBodyOf(bytes: number): string {
  const head = '{"unknown_member": "';
  const tail = '"}';
  return `${head}${'a'.repeat(bytes - head.length - tail.length)}${tail}`;
}

describe('the body limit', () => {
  const withBodies = OPERATIONS.filter((o) => o.body?.mediaType === 'application/json');

  it.each(withBodies.map((o) => [o.id, o] as const))(
    '%s reads a body of the limit, and answers 413 to one byte more',
    async (_id, op) => {
      const valid = validRequest(op, world);
      const atLimit = await send({ ...valid, body: refusedBodyOf(DEFAULT_BODY_LIMIT) });
      // Read whole, then refused for what it says: the world's webhook, signed without a secret
      // yet, refuses every delivery so.
      const refusal = op.public ? [403, 'webhook_secret_not_set'] : [400, 'invalid_request_body'];
      expect([atLimit.status, codeOf(atLimit)]).toEqual(refusal);
      const above = await send({ ...valid, body: refusedBodyOf(DEFAULT_BODY_LIMIT + 1) });
      expect([above.status, codeOf(above)]).toEqual([413, 'request_body_too_large']);
      expect(specProblem(op, above)).toBeUndefined();
    },
  );

  it('holds a scratchpad value to 65536 bytes', async () => {
    const op = operation('setScratchpadEntry');
    const valid = validRequest(op, world);
    expect((await send({ ...valid, body: 'é'.repeat(SCRATCHPAD_LIMIT / 2) })).status).toBe(204);
    const above = await send({ ...valid, body: `${'é'.repeat(SCRATCHPAD_LIMIT / 2)}a` });
    expect([above.status, codeOf(above)]).toEqual([413, 'request_body_too_large']);
    expect(specProblem(op, above)).toBeUndefined();
  });
});

describe('the rate limit', () => {
  it('is on by default: a key gets no more than its burst plus its rate, then 429', async () => {
    const key = await server.newAccount(world.orgName, 'user');
    const hurried = createSender(server, { connections: 16 });
    const status = { method: 'get', path: '/v0/status', headers: { authorization: `Bearer ${key}` } };
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 600 }, () => send(status, hurried)));
    const seconds = (Date.now() - started) / 1000;
    await hurried.close();
    const accepted = answers.filter((a) => a.status === 200).length;
    // The default: bursts of 200, then 100 a second (one more for the clock's rounding).
    expect(accepted).toBeLessThanOrEqual(200 + Math.ceil(100 * seconds) + 1);
    expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true);
    const limited = answers.find((a) => a.status === 429);
    if (limited) {
      expect(specProblem(operation('getStatus'), limited)).toBeUndefined();
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // Another key is not held back by this one.
    expect((await send({ ...status, headers: { authorization: `Bearer ${server.adminKey}` } })).status).toBe(
      200,
    );
  });

  it('follows its configuration, and lets the key in again after Retry-After', async () => {
    const limited = await startTestServer({ rateLimit: { perSecond: 1, burst: 2 } });
    const slow = createSender(limited, { connections: 1 });
    try {
      const status = {
        method: 'get',
        path: '/v0/status',
        headers: { authorization: `Bearer ${limited.adminKey}` },
      };
      const answers: Answer[] = [];
      for (let i = 0; i < 5; i += 1) answers.push(await send(status, slow));
      // The burst passes; the rest would need seconds between them to pass too.
      expect(answers.slice(0, 2).map((a) => a.status)).toEqual([200, 200]);
      const refused = answers.find((a) => a.status === 429);
      if (!refused) throw new Error(`no 429 in ${answers.map((a) => a.status)}`);
      expect(codeOf(refused)).toBe('rate_limited');
      expect(specProblem(operation('getStatus'), refused)).toBeUndefined();
      const wait = Number(refused.headers['retry-after']);
      expect(wait).toBeGreaterThanOrEqual(1);
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      expect((await send(status, slow)).status).toBe(200);
    } finally {
      await slow.close();
      await limited.close();
    }
  });
});

describe("the rate limit's memory", () => {
  it('stays bounded however many keys come and go (each task attempt has its own)', () => {
    let now = 0;
    const limiter = rateLimit({ perSecond: 100, burst: 200 }, () => now);
    const request = {} as Request;
    const pass = (keyId: string) => {
      const res = { locals: { principal: { keyId } } } as unknown as Response;
      limiter(request, res, () => undefined);
    };
    const keysOnce = (from: number, count: number) => {
      for (let i = from; i < from + count; i += 1) {
        pass(`key-${i.toString().padStart(23, '0')}`);
        // A thousand new keys every 10 seconds: the buckets of the older ones refill.
        if (i % 1000 === 0) now += 10_000;
      }
    };
    keysOnce(0, 20_000);
    const warm = memoryAfterGc().heapMiB;
    keysOnce(20_000, 300_000);
    // 300,000 kept buckets would take tens of MiB.
    expect(memoryAfterGc().heapMiB - warm).toBeLessThan(8);
  });
});

describe('header and URL sizes', () => {
  // Node refuses a request whose headers (request line included) exceed 16 KiB before the
  // application sees it: 431 without a body, and the connection is closed. These two
  // transport limits are the only answers without the error object (see SECURITY.md).
  it('answers 431 to 20 KiB of headers', async () => {
    const answer = await send({
      method: 'get',
      path: '/v0/status',
      headers: { authorization: `Bearer ${server.adminKey}`, 'x-padding': 'a'.repeat(20 * 1024) },
    });
    expect(answer.status).toBe(431);
  });

  it('answers 431 to a URL of 20 KiB', async () => {
    const answer = await send({
      method: 'get',
      path: `/v0/projects?after=${'a'.repeat(20 * 1024)}`,
      headers: { authorization: `Bearer ${server.adminKey}` },
    });
    expect(answer.status).toBe(431);
  });

  it('answers a long URL under the limit with the error object', async () => {
    const answer = await send({
      method: 'get',
      path: `/v0/projects?after=${'a'.repeat(10 * 1024)}`,
      headers: { authorization: `Bearer ${server.adminKey}` },
    });
    expect([answer.status, codeOf(answer)]).toEqual([400, 'invalid_query_parameter']);
  });
});

describe('many connections', () => {
  it('answers 200 clients connected at once, each correctly', async () => {
    const clients = 200;
    // A key of its own: its burst (200) covers every request.
    const key = await server.newAccount(world.orgName, 'user');
    // 200 TLS handshakes at once take a loaded machine more than undici's 10 s to connect.
    const agents = Array.from(
      { length: clients },
      () => new Agent({ connect: { ca: server.ca, timeout: 60_000 } }),
    );
    try {
      const answers = await Promise.all(
        agents.map(async (dispatcher) => {
          tally.requests += 1;
          const response = await request(`${server.baseUrl}/v0/projects/id/${world.project.id}`, {
            headers: { authorization: `Bearer ${key}` },
            dispatcher,
          });
          return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
        }),
      );
      tally.failures5xx += answers.filter((a) => a.status >= 500).length;
      expect(answers.map((a) => a.status)).toEqual(Array(clients).fill(200));
      expect(answers.every((a) => JSON.parse(a.text).id === world.project.id)).toBe(true);
      expect(answers.every((a) => specProblem(operation('getProject'), a) === undefined)).toBe(true);
    } finally {
      await Promise.all(agents.map((agent) => agent.close()));
    }
  });
});
