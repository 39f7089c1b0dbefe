import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import { type ApiClient, createClient, type ProjectChange, projectChanges } from '@pipewright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { command, pipeline, projectWith, task, trigger } from '../helpers/projects.js';
import { rawRequest } from '../helpers/raw.js';
import { collect, forwardingProxy } from '../helpers/streams.js';
import { startTestServer, type TestServer, uniqueName } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';
import { onPostgres } from '../postgres/databases.js';

// The stream of a project's changes (GET /changes), read through the client's helper.

let server: TestServer;
beforeAll(async () => {
  // The scheduler on its own connection, as in the program: task changes are committed there.
  server = await startTestServer({ streams: { maxPerKey: 1000 } });
});
afterAll(async () => {
  await server.close();
});

const specs = [
  task('noop', { steps: [{ command: 'true' }] }),
  pipeline('quick', [{ task: 'noop' }]),
  command('go', ['quick']),
  trigger('on-push', 'push', ['quick']),
];

const FINAL = new Set(['successful', 'failed', 'aborted']);

/** A message as [event, its pipeline, its status] (an event has neither). */
function shown(message: ProjectChange): [string, string?, string?] {
  if (message.event === 'pipeline') return [message.event, message.data.id, message.data.status];
  if (message.event === 'task') return [message.event, message.data.pipeline_id, message.data.status];
  return [message.event];
}

/** The id of the event an `event` message carries. */
const eventId = (message: ProjectChange) => (message.event === 'event' ? message.data.id : undefined);

async function execute(client: ApiClient) {
  const { data } = await client.GET('/resources/type/{type}/name/{name}', {
    params: { path: { type: 'command', name: 'go' } },
  });
  const { data: execution } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: data?.id as string } },
    body: { parameters: {} },
  });
  return execution?.pipeline_ids[0] as string;
}

async function push(client: ApiClient, n: number) {
  const { data } = await client.POST('/events', { body: { connector: 'custom', name: 'push', data: { n } } });
  return data?.[0]?.id as string;
}

describe('streamChanges', () => {
  it('sends a pipeline and its task from creation to end, as the read routes return them', async () => {
    const { client } = await projectWith(server, specs);
    const controller = new AbortController();
    const messages = projectChanges(client, {}, { signal: controller.signal });
    const first = await messages.next();
    expect(first.value).toMatchObject({ event: 'start', data: { reset: false } });
    const pipelineId = await execute(client);
    const seen = await collect(
      messages,
      (message) => message.event === 'pipeline' && FINAL.has(message.data.status),
    );
    controller.abort();
    const pipelines = seen.filter((message) => message.event === 'pipeline');
    const tasks = seen.filter((message) => message.event === 'task');
    expect(pipelines.map((message) => message.data.id)).toEqual(pipelines.map(() => pipelineId));
    expect(pipelines.at(-1)?.data).toEqual(
      (await client.GET('/pipelines/id/{id}', { params: { path: { id: pipelineId } } })).data,
    );
    expect(tasks.at(-1)?.data.status).toBe('successful');
    expect(seen.some((message) => message.event === 'event')).toBe(true);
    // Ids grow with every message.
    const ids = seen.map((message) => Number(message.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });
  it('resumes without loss or repetition across a forced disconnect', async () => {
    const { client, project } = await projectWith(server, specs);
    const proxy = await forwardingProxy(server.baseUrl);
    const throughProxy = createClient({
      baseUrl: proxy.baseUrl,
      apiKey: server.adminKey,
      ca: server.ca,
      projectId: project.id,
    });
    const resumedFrom: (string | undefined)[] = [];
    const controller = new AbortController();
    const messages = projectChanges(
      throughProxy,
      {},
      { signal: controller.signal, retryMs: 20, onReconnect: (id) => resumedFrom.push(id) },
    );
    try {
      await messages.next();
      const events: string[] = [];
      for (let n = 0; n < 5; n += 1) events.push(await push(client, n));
      const before = await collect(messages, (message) => eventId(message) === events[4]);
      proxy.cutAll();
      // Committed while the stream is cut, then while it reconnects, then after.
      for (let n = 5; n < 15; n += 1) events.push(await push(client, n));
      const after = await collect(messages, (message) => eventId(message) === events[14]);
      const read = [...before, ...after];
      expect(read.filter((message) => message.event === 'event').map((message) => message.data.id)).toEqual(
        events,
      );
      const ids = read.filter((message) => message.event !== 'start').map((message) => Number(message.id));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(resumedFrom.length).toBeGreaterThanOrEqual(1);
      expect(proxy.connections).toBeGreaterThanOrEqual(2);
    } finally {
      controller.abort();
      await proxy.close();
    }
  });

  it('starts afresh, saying reset, from an id it cannot resume from', async () => {
    const { client } = await projectWith(server, specs);
    const controller = new AbortController();
    const messages = projectChanges(client, {}, { signal: controller.signal, lastEventId: '999999999999' });
    const first = await messages.next();
    controller.abort();
    expect(first.value).toMatchObject({ event: 'start', data: { reset: true } });
  });

  it('sends only the pipelines and tasks that pass its filters, live and caught up', async () => {
    const { client } = await projectWith(server, [
      ...specs.slice(0, 3),
      pipeline('other', [{ task: 'noop' }]),
      trigger('on-push', 'push', ['other']),
    ]);
    const controller = new AbortController();
    const filtered = projectChanges(
      client,
      { pipeline_name: 'quick', status: 'successful' },
      { signal: controller.signal },
    );
    const start = (await filtered.next()).value as ProjectChange;
    await push(client, 1);
    const others = await waitFor(
      async () => (await client.GET('/pipelines', { params: { query: { status: 'successful' } } })).data,
      (page) => page?.elements.length === 1,
    );
    const quick = await execute(client);
    const live = await collect(filtered, (message) => message.event === 'pipeline');
    // From before both pipelines, through the change log: that pipeline alone, whatever its status.
    const caughtUp = await collect(
      projectChanges(
        client,
        { pipeline_id: others?.elements[0]?.id },
        { signal: controller.signal, lastEventId: start.id },
      ),
      (message) => message.event === 'pipeline' && message.data.status === 'successful',
    );
    controller.abort();
    expect(live.map(shown)).toEqual(live.map((message) => [message.event, quick, 'successful']));
    expect(caughtUp.slice(1).map(shown)).toEqual(
      caughtUp.slice(1).map((message) => [message.event, others?.elements[0]?.id, expect.any(String)]),
    );
  });

  it('sends each of the streams open together what its own filters select', async () => {
    const { client } = await projectWith(server, [
      ...specs.slice(0, 3),
      pipeline('other', [{ task: 'noop' }]),
      trigger('on-push', 'push', ['other']),
    ]);
    const controller = new AbortController();
    const open = (filters: { pipeline_name?: string; status?: 'successful' }) =>
      projectChanges(client, filters, { signal: controller.signal });
    // Streams of one project are delivered each batch together, those with the same filters alike.
    const streams = [
      open({}),
      open({}),
      open({ pipeline_name: 'quick' }),
      open({ pipeline_name: 'other' }),
      open({ status: 'successful' }),
    ];
    for (const stream of streams) await stream.next();
    const quick = await execute(client);
    await push(client, 1);
    /** Read until `count` pipelines have ended successfully. */
    const ended = (count: number) => {
      const seen = new Set<string>();
      return (message: ProjectChange) => {
        if (message.event === 'pipeline' && message.data.status === 'successful') seen.add(message.data.id);
        return seen.size === count;
      };
    };
    const [all, again, quickOnly, otherOnly, successful] = (
      await Promise.all(streams.map((stream, n) => collect(stream, ended(n < 2 || n === 4 ? 2 : 1))))
    ).map((messages) => messages.map(shown));
    controller.abort();
    const other = all?.find(([event, id]) => event === 'pipeline' && id !== quick)?.[1];
    /** What the unfiltered stream sent that `keep` selects, as far as `messages` went. */
    const selected = (keep: (message: ReturnType<typeof shown>) => boolean, messages = [] as unknown[]) =>
      all?.filter(keep).slice(0, messages.length);
    expect(again).toEqual(all);
    expect(quickOnly?.at(-1)).toEqual(['pipeline', quick, 'successful']);
    expect(quickOnly).toEqual(selected(([, id]) => id === quick, quickOnly));
    expect(otherOnly?.at(-1)).toEqual(['pipeline', other, 'successful']);
    expect(otherOnly).toEqual(selected(([, id]) => id === other, otherOnly));
    expect(successful).toEqual(selected(([, , status]) => status === 'successful', successful));
  });

  it('takes the project as a query parameter, and needs it somewhere', async () => {
    const { project } = await projectWith(server, specs);
    const headers = { authorization: `Bearer ${server.adminKey}` };
    const missing = await rawRequest(server.baseUrl, server.ca, {
      method: 'GET',
      path: '/v0/changes',
      headers,
    });
    expect(missing.status).toBe(400);
    expect(missing.json?.code).toBe('missing_project_id');
    const controller = new AbortController();
    const bare = createClient({ baseUrl: server.baseUrl, apiKey: server.adminKey, ca: server.ca });
    const { response } = await bare.GET('/changes', {
      params: { query: { project_id: project.id } },
      parseAs: 'stream',
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    controller.abort();
  });

  it('writes its messages as they are to an HTTP/1.0 client, which takes no chunked body', async () => {
    const { client, project } = await projectWith(server, specs);
    const { hostname, port } = new URL(server.baseUrl);
    const socket = tlsConnect({ host: hostname, port: Number(port), ca: server.ca });
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
    });
    try {
      socket.write(
        `GET /v0/changes?project_id=${project.id} HTTP/1.0\r\nAuthorization: Bearer ${server.adminKey}\r\n\r\n`,
      );
      await waitFor(
        async () => received,
        (text) => text.includes('event: start\n'),
      );
      const pipelineId = await execute(client);
      const ended = `"id":"${pipelineId}"`;
      await waitFor(
        async () => received,
        (text) => text.split('\n\n').some((block) => block.includes(ended) && block.includes('"successful"')),
      );
    } finally {
      socket.destroy();
    }
    const [head = '', body = ''] = received.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head.toLowerCase()).not.toContain('transfer-encoding');
    // Nothing but whole messages: event, id and JSON data, each ended by a blank line.
    const blocks = body.split('\n\n');
    expect(blocks.pop()).toBe('');
    for (const block of blocks) {
      expect(block).toMatch(/^event: (start|event|pipeline|task)\nid: \d+\ndata: \{.*\}$/);
    }
  });

  it("ends a key's streams once the key is revoked", async () => {
    const { project } = await projectWith(server, specs);
    const key = await server.newAccount('default', 'user');
    const messages = projectChanges(server.client(key, project.id), {}, { retryMs: 20 });
    await messages.next();
    await server.store.apiKeys.revoke(key.slice(4, 31));
    const seen = await collect(messages, (message) => message.event === 'end');
    expect(seen.at(-1)?.data).toEqual({ reason: 'access_revoked' });
    expect((await messages.next()).done).toBe(true);
  });

  it('ends once its project is deleted', async () => {
    const { project } = await projectWith(server, specs);
    const messages = projectChanges(server.client(server.adminKey, project.id));
    await messages.next();
    await server.client().DELETE('/projects/id/{id}', { params: { path: { id: project.id } } });
    const seen = await collect(messages, (message) => message.event === 'end');
    expect(seen.at(-1)?.data).toEqual({ reason: 'project_deleted' });
  });

  it("gives another organization's key nothing", async () => {
    const { client, project } = await projectWith(server, specs);
    const otherKey = await server.newOrganization();
    await expect(projectChanges(server.client(otherKey, project.id)).next()).rejects.toMatchObject({
      status: 404,
      code: 'unknown_project',
    });
    const bare = createClient({ baseUrl: server.baseUrl, apiKey: otherKey, ca: server.ca });
    await expect(
      bare.GET('/changes', { params: { query: { project_id: project.id } }, parseAs: 'stream' }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_project' });
    // Its own project's stream shows its own changes only, whatever happens in the other.
    const other = await projectWith(server, specs, otherKey);
    const controller = new AbortController();
    const messages = projectChanges(other.client, {}, { signal: controller.signal });
    await messages.next();
    await execute(client);
    await push(client, 1);
    const mine = await push(other.client, 2);
    const seen = await collect(messages, (message) => eventId(message) === mine);
    controller.abort();
    const projects = seen.map((message) => ('project_id' in message.data ? message.data.project_id : 'none'));
    expect(new Set(projects)).toEqual(new Set([other.project.id]));
  });

  it('serves 500 streams at once, every one of them every change, without an error', async () => {
    const { client } = await projectWith(server, specs);
    const controller = new AbortController();
    const streams = Array.from({ length: 500 }, () =>
      projectChanges(client, {}, { signal: controller.signal, maxRetries: 0 }),
    );
    try {
      // Opened 50 at a time: 500 TLS handshakes at once, on a loaded machine, outlast the client's connect timeout.
      for (let first = 0; first < streams.length; first += 50) {
        await Promise.all(streams.slice(first, first + 50).map((stream) => stream.next()));
      }
      const reading = streams.map((stream) =>
        collect(
          stream,
          (message) =>
            eventId(message) !== undefined && message.event === 'event' && message.data.data.n === 9,
          60_000,
        ),
      );
      const events: string[] = [];
      for (let n = 0; n < 10; n += 1) events.push(await push(client, n));
      const read = await Promise.all(reading);
      for (const messages of read)
        expect(messages.map(eventId).filter((id) => id !== undefined)).toEqual(events);
    } finally {
      controller.abort();
    }
  });
});

describe('a change committed', () => {
  // The server checks for commits nobody told of once an hour, and renews its lease as rarely:
  // only the store's word that something was committed brings a change within the tests' bounds.
  const rarely = { changeChecksMs: 3_600_000, scheduler: { leaseMs: 3_600_000 } };

  /** A new project of `server`, and its stream of changes, open. */
  async function watched(server: TestServer) {
    const { client, project } = await projectWith(server, specs);
    const controller = new AbortController();
    const messages = projectChanges(client, {}, { signal: controller.signal });
    await messages.next();
    return { client, project, messages, close: () => controller.abort() };
  }

  /**
   * Messages read until one makes `done` true, all on the stream first opened: a stream that
   * failed and was opened again would start anew.
   */
  async function readUntil(
    messages: AsyncIterator<ProjectChange>,
    done: (message: ProjectChange) => boolean,
  ) {
    const seen = await collect(messages, done);
    expect(seen.filter((message) => message.event === 'start')).toEqual([]);
    return seen;
  }
  const ended = (message: ProjectChange) => message.event === 'pipeline' && FINAL.has(message.data.status);

  it('by the server reaches its streams at once, through to the end of what it runs', async () => {
    const told = await startTestServer(rarely);
    try {
      const { client, messages, close } = await watched(told);
      const pipelineId = await execute(client);
      const seen = await readUntil(messages, ended);
      close();
      expect(seen.at(-1)?.data).toMatchObject({ id: pipelineId, status: 'successful' });
    } finally {
      await told.close();
    }
  });

  it.skipIf(onPostgres)('by another process, as an admin command, reaches the streams at once', async () => {
    const told = await startTestServer(rarely);
    try {
      const { client, messages, close } = await watched(told);
      const pipelineId = await execute(client);
      await readUntil(messages, ended);
      // A process of its own writes the SQLite file: it flips the status of the finished pipeline.
      const script = `const db = new (require(process.argv[1]))(process.argv[2]);
        db.pragma('busy_timeout = 10000');
        db.prepare("UPDATE pipelines SET status = 'failed' WHERE id = ?").run(process.argv[3]);`;
      await promisify(execFile)(process.execPath, [
        '-e',
        script,
        createRequire(import.meta.url).resolve('better-sqlite3'),
        told.database,
        pipelineId,
      ]);
      const seen = await readUntil(
        messages,
        (message) => message.event === 'pipeline' && message.data.status === 'failed',
      );
      close();
      expect(seen.at(-1)?.data).toMatchObject({ id: pipelineId, status: 'failed' });
    } finally {
      await told.close();
    }
  });

  it.runIf(onPostgres)('by another server reaches the streams at once', async () => {
    // This server runs nothing: every commit after the stream opens is the other server's.
    const told = await startTestServer({ ...rarely, scheduler: { ...rarely.scheduler, maxRunningTasks: 0 } });
    // An instance of its own, as servers of one process are not unless named: it is told of the
    // other's commits by notification only.
    const beside = await startTestServer({
      ...rarely,
      scheduler: { ...rarely.scheduler, instance: uniqueName('beside') },
      beside: told,
    });
    try {
      const { project, messages, close } = await watched(told);
      const id = await push(beside.client(told.adminKey, project.id), 1);
      const seen = await readUntil(messages, ended);
      close();
      expect(seen.some((message) => eventId(message) === id)).toBe(true);
      expect(seen.at(-1)?.data).toMatchObject({ status: 'successful' });
    } finally {
      await beside.close();
      await told.close();
    }
  });
});

describe('the window of resume', () => {
  it('holds the latest changes: from an id the purge passed, the stream starts afresh', async () => {
    const purging = await startTestServer({ purger: { clock: () => new Date(), changeLogRows: 3 } });
    const controller = new AbortController();
    const first = async (client: ApiClient, lastEventId?: string) =>
      (
        await projectChanges(
          client,
          {},
          { signal: controller.signal, ...(lastEventId ? { lastEventId } : {}) },
        ).next()
      ).value as ProjectChange;
    try {
      const { client } = await projectWith(purging, specs);
      const start = await first(client);
      await push(client, 1);
      await execute(client);
      // Both pipelines ended: no change after `latest` can push it out of the window.
      await waitFor(
        async () => (await client.GET('/pipelines')).data?.elements ?? [],
        (pipelines) => pipelines.length === 2 && pipelines.every((one) => FINAL.has(one.status)),
      );
      const latest = await first(client);
      expect(Number(latest.id) - Number(start.id)).toBeGreaterThan(3);
      expect((await purging.purger?.purgeOnce())?.changes).toBeGreaterThan(0);
      expect(await first(client, start.id)).toMatchObject({ event: 'start', data: { reset: true } });
      expect(await first(client, latest.id)).toMatchObject({
        event: 'start',
        id: latest.id,
        data: { reset: false },
      });
    } finally {
      controller.abort();
      await purging.close();
    }
  });
});
