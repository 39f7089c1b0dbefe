import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestServer } from '../helpers/test-server.js';
import { dumpDatabase } from './db-dump.js';
import { recordFigures } from './figures.js';
import { createSender, type Sender } from './http.js';
import { type BadRequest, badRequests } from './invalid.js';
import { type Answer, OPERATIONS, type Operation, specProblem } from './spec.js';
import { buildWorld, validRequest, type World } from './world.js';

// Bad input, driven by the spec: for every operation, requests that break one thing of a
// valid one (see invalid.ts). Each must get a 4xx that the operation lists, with the error
// object and a code that fits what was broken; never a 5xx, a reset or a hang. The stored
// data must be the same afterwards. Deterministic: fixed seeds, fixed number of runs.

const BODY_LIMIT_BYTES = 1024 * 1024; // the server's default
/** About 2,000 requests a run over the 37 operations. */
const RUNS_PER_OPERATION = 55;
const SEED = 20261122;

const server = sharedTestServer({ bodyLimitBytes: BODY_LIMIT_BYTES });
let world: World;
let sender: Sender;
let before: ReturnType<typeof dumpDatabase>;
const tally = { requests: 0, failures5xx: 0 };

beforeAll(async () => {
  world = await buildWorld(server, server.adminKey);
  sender = createSender(server);
  before = dumpDatabase(server.databaseFile as string);
});

afterAll(async () => {
  recordFigures('bad input', { ...tally, operations: OPERATIONS.length });
  await sender.close();
});

/** Why `answer` is not an acceptable answer to `bad`, or undefined. */
function problemOf(operation: Operation, bad: BadRequest, answer: Answer): string | undefined {
  if (answer.status < 400 || answer.status > 499)
    return `answered ${answer.status}: ${answer.text.slice(0, 300)}`;
  const mismatch = specProblem(operation, answer);
  if (mismatch) return `${mismatch}: ${answer.text.slice(0, 300)}`;
  if (operation.method === 'head') return undefined;
  const { code } = JSON.parse(answer.text) as { code: string };
  return bad.codes.includes(code)
    ? undefined
    : `answered ${answer.status} ${code}, expected one of ${bad.codes}`;
}

async function attempt(operation: Operation, bad: BadRequest): Promise<boolean> {
  tally.requests += 1;
  let answer: Answer;
  try {
    answer = await sender.send(bad.request);
  } catch (error) {
    tally.failures5xx += 1;
    throw new Error(`no answer: ${String(error)}`);
  }
  if (answer.status >= 500) tally.failures5xx += 1;
  const problem = problemOf(operation, bad, answer);
  if (problem) throw new Error(problem);
  return true;
}

describe('bad requests of every operation', () => {
  it.each(OPERATIONS.map((operation, index) => [operation.id, operation, index] as const))(
    '%s answers each with a 4xx of its own',
    async (_id, operation, index) => {
      const valid = validRequest(operation, world);
      const requests = badRequests(operation, world, valid, { bodyLimitBytes: BODY_LIMIT_BYTES });
      const details = await fc.check(
        fc.asyncProperty(requests, (bad) => attempt(operation, bad)),
        { seed: SEED + index, numRuns: RUNS_PER_OPERATION },
      );
      if (details.failed) {
        const [bad] = details.counterexample ?? [];
        const sent = bad ? `${bad.request.method.toUpperCase()} ${bad.request.path.slice(0, 200)}` : '';
        throw new Error(`${bad?.what} (${sent}): ${details.errorInstance}`);
      }
    },
  );

  it('answers a method no operation of the path has with 405 and the Allow header', async () => {
    const paths = [...new Set(OPERATIONS.map((o) => o.path))];
    for (const path of paths) {
      const operation = OPERATIONS.find((o) => o.path === path) as Operation;
      const request = validRequest(operation, world);
      tally.requests += 1;
      const answer = await sender.send({ ...request, method: 'patch' });
      const methods = OPERATIONS.filter((o) => o.path === path).map((o) => o.method.toUpperCase());
      // HEAD is served wherever GET is, and OPTIONS everywhere (src/http/methods.ts).
      if (methods.includes('GET') && !methods.includes('HEAD')) methods.push('HEAD');
      methods.push('OPTIONS');
      expect([path, answer.status, JSON.parse(answer.text).code]).toEqual([path, 405, 'method_not_allowed']);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(String(answer.headers.allow).split(/, */).sort()).toEqual(methods.sort());
    }
  });

  it('left the stored data as it was, and the server up', async () => {
    expect(dumpDatabase(server.databaseFile as string)).toEqual(before);
    const status = await sender.send({
      method: 'get',
      path: '/v0/status',
      headers: { authorization: `Bearer ${server.adminKey}` },
    });
    expect(status.status).toBe(200);
    expect(tally.failures5xx).toBe(0);
  });
});
