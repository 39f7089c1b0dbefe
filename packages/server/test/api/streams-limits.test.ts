import { request as httpsRequest } from 'node:https';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type ApiClient, type ProjectChange, projectChanges } from '@pipewright/client';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pipeline, projectWith, task, trigger } from '../helpers/projects.js';
import { rawRequest } from '../helpers/raw.js';
import { collect } from '../helpers/streams.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';

// The limits of the streams: the cap per key, heartbeats, the cut-off of a consumer that stops
// reading, and their end when the server stops.

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const BUFFER_BYTES = 1024 * 1024;
const MIB = 1024 * 1024;

let server: TestServer;
let stopping = false;
beforeAll(async () => {
  server = await startTestServer({
    streams: { maxPerKey: 3, heartbeatMs: 200, bufferBytes: BUFFER_BYTES },
    isStopping: () => stopping,
  });
});
afterAll(() => server.close());

const specs = [
  task('noop', { steps: [{ command: 'true' }] }),
  pipeline('quick', [{ task: 'noop' }]),
  trigger('on-push', 'push', ['quick']),
];

async function push(client: ApiClient, data: Record<string, unknown>) {
  const { data: events } = await client.POST('/events', {
    body: { connector: 'custom', name: 'push', data },
  });
  return events?.[0]?.id as string;
}

const eventId = (message: ProjectChange) => (message.event === 'event' ? message.data.id : undefined);

/**
 * A stream opened outside the client whose response is not read until `resume`, which then reads
 * it to its end and resolves to what it read (a stalled client cannot see its connection closed).
 */
function stalledStream(projectId: string): Promise<{ resume(): Promise<string> }> {
  const { hostname, port } = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        hostname,
        port,
        path: '/v0/changes',
        ca: server.ca,
        headers: { authorization: `Bearer ${server.adminKey}`, 'x-service-project-id': projectId },
      },
      (res) => {
        res.pause();
        resolve({
          resume: () =>
            new Promise((done) => {
              const chunks: Buffer[] = [];
              res.on('data', (chunk: Buffer) => chunks.push(chunk));
              res.on('error', () => undefined);
              res.socket.once('close', () => done(Buffer.concat(chunks).toString()));
              res.resume();
            }),
        });
      },
    );
    req.once('error', reject);
    req.end();
  });
}

/** The memory the JavaScript of this process holds (the server's and the test's), after a collection. */
function heldMemory(): number {
  collectGarbage();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

describe('streams', () => {
  it('are refused past the cap of a key with 429, and taken again once one closes', async () => {
    const { project } = await projectWith(server, specs);
    const key = await server.newAccount('default', 'user');
    const controllers = [0, 1, 2].map(() => new AbortController());
    const open = controllers.map((controller) =>
      projectChanges(server.client(key, project.id), {}, { signal: controller.signal }),
    );
    for (const stream of open) await stream.next();
    const refused = await rawRequest(server.baseUrl, server.ca, {
      method: 'GET',
      path: `/v0/changes?project_id=${project.id}`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(refused.status).toBe(429);
    expect(refused.json?.code).toBe('rate_limited');
    expect(refused.headers['retry-after']).toBe('5');
    // Another key is not held back by this one's streams.
    const other = new AbortController();
    await projectChanges(server.client(server.adminKey, project.id), {}, { signal: other.signal }).next();
    other.abort();
    controllers[0]?.abort();
    const again = new AbortController();
    const taken = await waitFor(
      async () => {
        try {
          return await projectChanges(
            server.client(key, project.id),
            {},
            { signal: again.signal, maxRetries: 0 },
          ).next();
        } catch {
          return undefined;
        }
      },
      (first) => first !== undefined,
    );
    expect(taken?.value).toMatchObject({ event: 'start' });
    again.abort();
    for (const controller of controllers) controller.abort();
  });

  it('send a heartbeat with the current id when idle', async () => {
    const { project } = await projectWith(server, specs);
    const dispatcher = new Agent({ connect: { ca: server.ca } });
    const response = await request(`${server.baseUrl}/v0/changes`, {
      headers: { authorization: `Bearer ${server.adminKey}`, 'x-service-project-id': project.id },
      dispatcher,
    });
    let text = '';
    const deadline = Date.now() + 20_000;
    for await (const chunk of response.body) {
      text += String(chunk);
      if (/: heartbeat\nid: \d+\n\n/.test(text) || Date.now() > deadline) break;
    }
    await dispatcher.destroy();
    const start = /^event: start\nid: (\d+)\n/.exec(text)?.[1];
    expect(text).toMatch(new RegExp(`: heartbeat\\nid: ${start}\\n\\n`));
  });

  it('cut off a consumer that stops reading, without holding back another, and the memory returns', async () => {
    const { client, project } = await projectWith(server, specs);
    const controller = new AbortController();
    const reader = projectChanges(client, {}, { signal: controller.signal, maxRetries: 0 });
    await reader.next();
    const before = heldMemory();
    const stalled = await stalledStream(project.id);
    // 20 MiB of events: far more than the bound, and than the kernel's buffers hold.
    const big = 'x'.repeat(400 * 1024);
    const ids: string[] = [];
    const last = 49;
    // Read while the events come, as a consumer that keeps up does.
    const reading = collect(
      reader,
      (message) => message.event === 'event' && message.data.data.n === last,
      60_000,
    );
    for (let n = 0; n <= last; n += 1) ids.push(await push(client, { n, big }));
    const read = await reading;
    expect(read.map(eventId).filter((id) => id !== undefined)).toEqual(ids);
    controller.abort();
    read.length = 0;
    // The stalled consumer was cut off long ago: what it held is gone (once sockets have closed).
    const held = await waitFor(
      async () => (heldMemory() - before) / MIB,
      (mib) => mib < 6,
    );
    expect(held).toBeLessThan(6);
    // It finds its connection closed, short of the last events, without an end.
    const received = await Promise.race([
      stalled.resume(),
      new Promise<string>((_, reject) =>
        setTimeout(() => reject(new Error('the stalled stream is still open')), 20_000),
      ),
    ]);
    expect(received).toMatch(/^event: start\n/);
    expect(received).not.toContain(ids.at(-1));
    expect(received).not.toContain('event: end');
  });
});

describe('a server that stops', () => {
  it('ends its streams with server_stopping, and refuses new ones with 503', async () => {
    const { project } = await projectWith(server, specs);
    const messages = projectChanges(server.client(server.adminKey, project.id), {}, { maxRetries: 0 });
    await messages.next();
    stopping = true;
    try {
      const seen = await collect(messages, (message) => message.event === 'end');
      expect(seen.at(-1)?.data).toEqual({ reason: 'server_stopping' });
      const refused = await rawRequest(server.baseUrl, server.ca, {
        method: 'GET',
        path: `/v0/changes?project_id=${project.id}`,
        headers: { authorization: `Bearer ${server.adminKey}` },
      });
      expect(refused.status).toBe(503);
    } finally {
      stopping = false;
      await messages.return(undefined);
    }
  });
});
