import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finished } from '../helpers/projects.js';
import { sharedTestServer, uniqueName } from '../helpers/test-server.js';
import { recordFigures } from './figures.js';
import { createSender, type RawRequest, type Sender } from './http.js';
import { memoryAfterGc } from './memory.js';
import { buildWorld, type World } from './world.js';

// Load: 50 clients, each on its own connection, sending mixed traffic (reads, scratchpad
// writes read back, events, command executions that run tasks, new projects) in rounds of a
// fixed number of steps, so that a slow machine does the same work as a fast one. Zero errors;
// memory measured after each round must not keep growing.

const CLIENTS = 50;
const ROUNDS = 5;
/**
 * Rounds that warm up (compiled code, connection pools, SQLite's page cache, and the native
 * allocator's arenas, whose high-water mark a burst on a busy machine raises once for good).
 */
const WARM_ROUNDS = 2;
/** Steps of each client in a round: each one request, or two (a write and its read back). */
const STEPS_PER_ROUND = 40;
/** Executions over the whole run: each starts a task, a process. */
const MAX_EXECUTIONS = 60;
/**
 * Growth allowed from the end of the warm-up rounds to the end of the last, measured after a
 * garbage collection: what grows after the warm-up is what would leak. The heap is the precise
 * measure; the resident size also follows the native allocator's high-water marks, which a busy
 * machine raises late (CI measured 35-41 MiB of growth with the heap flat, to a resident size
 * no larger than before today's changes), hence its wider bound.
 */
const RSS_BOUND_MIB = 64;
const HEAP_BOUND_MIB = 16;

const server = sharedTestServer();
let world: World;
const tally = { requests: 0, failures5xx: 0, errors: 0, writesLost: 0, executions: 0 };
const errors: string[] = [];
const pipelines: string[] = [];
const memory: { rssMiB: number; heapMiB: number }[] = [];
/** How long the rounds took: their work is fixed, their duration is the machine's. */
let seconds = 0;

beforeAll(async () => {
  world = await buildWorld(server, server.adminKey);
});

afterAll(async () => {
  const [warm, last] = [memory[WARM_ROUNDS - 1], memory.at(-1)];
  recordFigures('load', {
    ...tally,
    clients: CLIENTS,
    seconds,
    rssMiB: last && Math.round(last.rssMiB),
    rssGrowthMiB: warm && last ? Math.round(last.rssMiB - warm.rssMiB) : undefined,
    heapGrowthMiB: warm && last ? Math.round(last.heapMiB - warm.heapMiB) : undefined,
  });
});

/** One client's round: its own connection, its own scratchpad keys, STEPS_PER_ROUND steps. */
async function client(index: number, sender: Sender, round: number): Promise<void> {
  const headers = { authorization: `Bearer ${server.adminKey}`, 'x-service-project-id': world.project.id };
  const json = { ...headers, 'content-type': 'application/json' };
  const pipeline = world.ids.pipelines ?? '';
  const send = async (request: RawRequest, expected: number) => {
    tally.requests += 1;
    const answer = await sender.send(request).catch((error: unknown) => ({ status: 0, text: String(error) }));
    if (answer.status >= 500 || answer.status === 0) tally.failures5xx += 1;
    if (answer.status !== expected) {
      tally.errors += 1;
      errors.push(`${request.method} ${request.path}: ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    return answer;
  };
  for (let step = 0; step < STEPS_PER_ROUND; step += 1) {
    const action = (index + step) % 10;
    if (action < 3) {
      const list = ['/v0/projects', '/v0/resources', '/v0/pipelines', '/v0/tasks', '/v0/events'][step % 5];
      await send({ method: 'get', path: `${list}?size=20`, headers }, 200);
    } else if (action < 5) {
      const path = [`/v0/pipelines/id/${pipeline}`, `/v0/tasks/id/${world.ids.tasks}`][step % 2] ?? '';
      await send({ method: 'get', path, headers }, 200);
    } else if (action < 8) {
      // Ten keys per client, rewritten: what was acknowledged must read back.
      const key = `client-${index}-${step % 10}`;
      const value = `round ${round} step ${step} ${'x'.repeat(step % 200)}`;
      const path = `/v0/pipelines/id/${pipeline}/scratchpad/key/${key}`;
      const written = await send(
        { method: 'put', path, headers: { ...headers, 'content-type': 'text/plain' }, body: value },
        204,
      );
      const read = await send({ method: 'get', path, headers }, 200);
      if (written.status === 204 && read.text !== value) tally.writesLost += 1;
    } else if (action < 9) {
      const body = JSON.stringify({
        connector: 'custom',
        name: 'nobody-listens',
        data: { client: index, step },
      });
      await send({ method: 'post', path: '/v0/events', headers: json, body }, 201);
    } else if (tally.executions < MAX_EXECUTIONS) {
      tally.executions += 1;
      const answer = await send(
        {
          method: 'post',
          path: `/v0/commands/id/${world.quickCommandId}/execute`,
          headers: json,
          body: '{}',
        },
        201,
      );
      if (answer.status === 201)
        pipelines.push(...(JSON.parse(answer.text) as { pipeline_ids: string[] }).pipeline_ids);
    } else {
      const body = JSON.stringify({ name: uniqueName('load') });
      await send({ method: 'post', path: '/v0/projects', headers: json, body }, 201);
    }
  }
}

describe('50 clients of mixed traffic', () => {
  it('get no error, and memory stays bounded across rounds', async () => {
    const senders = Array.from({ length: CLIENTS }, () => createSender(server, { connections: 1 }));
    try {
      const startedAt = Date.now();
      for (let round = 0; round < ROUNDS; round += 1) {
        await Promise.all(senders.map((sender, index) => client(index, sender, round)));
        memory.push(memoryAfterGc());
      }
      seconds = Math.round((Date.now() - startedAt) / 1000);
    } finally {
      await Promise.all(senders.map((sender) => sender.close()));
    }
    expect(errors.slice(0, 10)).toEqual([]);
    expect(tally.writesLost).toBe(0);
    const [warm, last] = [memory[WARM_ROUNDS - 1], memory.at(-1)];
    expect((last?.rssMiB ?? 0) - (warm?.rssMiB ?? 0)).toBeLessThan(RSS_BOUND_MIB);
    expect((last?.heapMiB ?? 0) - (warm?.heapMiB ?? 0)).toBeLessThan(HEAP_BOUND_MIB);
  }, 600_000); // a fixed amount of work, however long the machine takes: minutes when heavily loaded

  it('ran every pipeline it started to success', async () => {
    const client = server.client(server.adminKey, world.project.id);
    for (const id of pipelines) {
      expect((await finished(client, id)).status).toBe('successful');
    }
  });
});
