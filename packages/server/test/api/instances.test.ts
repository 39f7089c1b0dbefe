import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ProjectChange, projectChanges } from '@pipewright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execute, finished, pipeline, projectWith, startMain, task, tasksOf } from '../helpers/projects.js';
import { collect } from '../helpers/streams.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';
import { onPostgres } from '../postgres/databases.js';

// Two servers on one PostgreSQL database, as two machines would run them behind a load
// balancer: what one is asked, the other's tasks, streams and caches see. (A SQLite file has
// one server: these are PostgreSQL's alone.) The death of a server is the program's test
// (apps/server/test/postgres.test.ts): a server in this process cannot be killed.

let now = new Date();
let a: TestServer;
let b: TestServer;
beforeAll(async () => {
  if (!onPostgres) return;
  const ticker = { clock: () => now };
  a = await startTestServer({ scheduler: { instance: 'a', maxRunningTasks: 1 }, ticker });
  b = await startTestServer({ scheduler: { instance: 'b', maxRunningTasks: 1 }, ticker, beside: a });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/** A task that says it started (a file named after it), then waits for the test's word (another file). */
const waiting = (name: string, dir: string) =>
  task(name, {
    environment: { DIR: dir, NAME: name },
    steps: [{ code: 'touch "$DIR/started-$NAME"\nwhile [ ! -e "$DIR/go" ]; do sleep 0.05; done' }],
  });

describe.skipIf(!onPostgres)('several servers on one database', () => {
  it('share the work: each runs a task, and each is woken by what the other was asked', async () => {
    const dir = a.tempDir();
    const { project, client, pipelineId } = await startMain(a, [
      waiting('left', dir),
      waiting('right', dir),
      pipeline('main', [{ task: 'left' }, { task: 'right' }]),
    ]);
    // Each server runs one task at most: both running means each took one.
    await waitFor(
      async () => existsSync(join(dir, 'started-left')) && existsSync(join(dir, 'started-right')),
      Boolean,
    );
    expect([a.scheduler.runningCount, b.scheduler.runningCount]).toEqual([1, 1]);
    writeFileSync(join(dir, 'go'), '');
    expect((await finished(client, pipelineId)).status).toBe('successful');

    // Asked of B, run by A or B: B's API woke whichever had room.
    const onB = b.client(b.adminKey, project.id);
    const again = await execute(onB, 'go');
    expect((await finished(onB, again)).status).toBe('successful');
  });

  it('stop a task at once where it runs when it is aborted through the other', async () => {
    const dir = a.tempDir();
    const { project, client, pipelineId } = await startMain(a, [
      task('stubborn', {
        environment: { DIR: dir },
        steps: [{ code: 'touch "$DIR/started"\nsleep 120' }],
      }),
      pipeline('main', [{ task: 'stubborn' }]),
    ]);
    await waitFor(async () => existsSync(join(dir, 'started')), Boolean);
    const runner = a.scheduler.runningCount === 1 ? a : b;
    const other = runner === a ? b : a;
    const { response } = await other
      .client(other.adminKey, project.id)
      .POST('/pipelines/id/{id}/abort', path(pipelineId));
    expect(response.status).toBe(204);
    // The server that runs it learns of it from the other's commit, and stops its process.
    await waitFor(
      async () => runner.scheduler.runningCount,
      (n) => n === 0,
    );
    const [stubborn] = await tasksOf(client, pipelineId);
    expect(stubborn?.status).toBe('aborted');
  });

  it('show on one server the changes made through the other, live', async () => {
    const { project } = await projectWith(a, [
      task('noop', { steps: [{ command: 'true' }] }),
      pipeline('main', [{ task: 'noop' }]),
      { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['main'] } },
    ]);
    const controller = new AbortController();
    const onB = b.client(b.adminKey, project.id);
    const messages = projectChanges(onB, {}, { signal: controller.signal });
    expect((await messages.next()).value).toMatchObject({ event: 'start' });
    const pipelineId = await execute(a.client(a.adminKey, project.id), 'go');
    const seen = await collect(
      messages,
      (message: ProjectChange) =>
        message.event === 'pipeline' &&
        message.data.id === pipelineId &&
        message.data.status === 'successful',
    );
    controller.abort();
    // Changes read in one go show as the latest state: on a fast run, B may see the pipeline
    // only once it has ended. What it sent is what the read routes of A answer.
    const pipelines = seen.filter((m) => m.event === 'pipeline');
    expect(pipelines.at(-1)?.data).toEqual(
      (
        await a
          .client(a.adminKey, project.id)
          .GET('/pipelines/id/{id}', { params: { path: { id: pipelineId } } })
      ).data,
    );
  });

  it('refuse a key revoked through the other', async () => {
    const organization = await a.newOrganization();
    const onA = a.client(organization);
    const { data: key } = await onA.POST('/api_keys', { body: { name: 'short-lived' } });
    const secret = key?.key as string;
    // B has the key's owner in its cache once it served it.
    expect((await b.client(secret).GET('/org')).response.status).toBe(200);
    await onA.POST('/api_keys/id/{id}/revoke', { params: { path: { id: key?.id as string } } });
    await waitFor(
      () =>
        b
          .client(secret)
          .GET('/org')
          .then(
            () => 200,
            (error: { status: number }) => error.status,
          ),
      (status) => status === 401,
    );
  });

  it('tick a time trigger once, however many servers tick', async () => {
    const { client } = await projectWith(a, [
      task('noop', { steps: [{ command: 'true' }] }),
      pipeline('hourly', [{ task: 'noop' }]),
      {
        type: 'trigger',
        version: 1,
        name: 'hourly',
        data: { connector: 'time', event: 'tick', parameters: { periodic: 3600 }, pipelines: ['hourly'] },
      },
    ]);
    // Both plan the trigger from its install, then both pass the next three ticks.
    await Promise.all([a.ticker.tickOnce(), b.ticker.tickOnce()]);
    for (let hour = 1; hour <= 3; hour += 1) {
      now = new Date(now.getTime() + 3_600_000);
      await Promise.all([a.ticker.tickOnce(), b.ticker.tickOnce(), a.ticker.tickOnce()]);
    }
    const { data: events } = await client.GET('/events', { params: { query: { connector: 'time' } } });
    const times = (events?.elements ?? []).map((event) => event.event_time);
    expect(times).toHaveLength(3);
    expect(new Set(times).size).toBe(3);
  });
});

function path(id: string) {
  return { params: { path: { id } } };
}
