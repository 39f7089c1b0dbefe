import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiClient, walk } from '@pipewright/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import {
  completeInstantiations,
  INSTANTIATION_BATCH,
  instantiatePipelines,
  RELEASE_SLICE,
} from '../../src/services/intake/instantiation.js';
import type { Store } from '../../src/store/index.js';
import { command, finished, pipeline, projectWith, resourceId, task, tasksOf } from '../helpers/projects.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';
import { onPostgres } from '../postgres/databases.js';

// Scheduling whose work per task does not grow with the size of the pipeline or of a queue:
// a chain as long as these runs to its end within the tests' bounds only then (before, each
// claim weighed every waiting task of the pipeline, and 3,000 entries ran 5 tasks in 15 s).

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startTestServer({ scheduler: { maxRunningTasks: 4 } });
  dir = mkdtempSync(join(tmpdir(), 'pipewright-scale-'));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const chain = (length: number, taskName: string) =>
  Array.from({ length }, (_, i) => ({
    name: `e${i}`,
    task: taskName,
    ...(i > 0 ? { dependencies: [`e${i - 1}`] } : {}),
  }));

async function execute(client: ApiClient, name: string): Promise<string> {
  const { data } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: await resourceId(client, 'command', name) } },
    body: {},
  });
  return data?.pipeline_ids[0] ?? '';
}

async function allTasks(client: ApiClient, pipelineId: string) {
  const tasks = [];
  for await (const t of walk(client, '/tasks', { pipeline_id: pipelineId, size: 100 })) tasks.push(t);
  return tasks.sort((a, b) => Number(a.name.slice(1)) - Number(b.name.slice(1)));
}

/**
 * A pipeline made in a transaction of the test's own, as an event would make it: with its
 * first INSTANTIATION_BATCH tasks, the rest left to write (what a crash leaves behind).
 */
async function makePipeline(project: { id: string; org_id: string }, name: string): Promise<string> {
  const time = new Date().toISOString();
  const {
    ids: [id = ''],
  } = await server.store.transaction(async (tx) => {
    const event = {
      id: newId(),
      org_id: project.org_id,
      project_id: project.id,
      creation_time: time,
      event_time: time,
      connector: 'custom',
      name: 'made-by-hand',
      data: {},
      original_event_id: null,
    };
    await tx.events.insert(event);
    return instantiatePipelines(tx, { event, pipelines: [name], environment: {}, time });
  });
  return id;
}

/** 130 stages of 10 instances, each stage after the one before: counts matter. */
const stages = Array.from({ length: 130 }, (_, i) => ({
  name: `s${i}`,
  task: 'noop',
  nb_instances: 10,
  ...(i > 0 ? { dependencies: [`s${i - 1}`] } : {}),
}));

/** Every task of a pipeline of `stages` succeeded, each stage after every instance of the one before. */
async function expectStagesInOrder(client: ApiClient, id: string) {
  const tasks = await allTasks(client, id);
  expect(tasks).toHaveLength(1300);
  expect(tasks.every((t) => t.status === 'successful')).toBe(true);
  const byStage = new Map<number, typeof tasks>();
  for (const t of tasks)
    byStage.set(Number(t.name.slice(1)), [...(byStage.get(Number(t.name.slice(1))) ?? []), t]);
  for (let stage = 1; stage < 130; stage += 1) {
    const lastEnd = Math.max(...(byStage.get(stage - 1) ?? []).map((t) => Date.parse(t.end_time ?? '')));
    const firstStart = Math.min(...(byStage.get(stage) ?? []).map((t) => Date.parse(t.start_time ?? '')));
    expect(firstStart).toBeGreaterThanOrEqual(lastEnd);
  }
}

describe('scheduling at scale', () => {
  it('runs a chain of 1,000 entries to its end, each entry after the one before', async () => {
    const { client } = await projectWith(server, [
      task('noop', { steps: [{ command: 'true' }] }),
      pipeline('long', chain(1000, 'noop')),
      command('go', ['long']),
    ]);
    const pipelineId = await execute(client, 'go');
    expect((await finished(client, pipelineId, 150_000)).status).toBe('successful');
    const tasks = await allTasks(client, pipelineId);
    expect(tasks).toHaveLength(1000);
    expect(tasks.every((t) => t.status === 'successful')).toBe(true);
    for (let i = 1; i < tasks.length; i += 1) {
      const [before, after] = [tasks[i - 1], tasks[i]];
      expect(Date.parse(after?.start_time ?? '')).toBeGreaterThanOrEqual(Date.parse(before?.end_time ?? ''));
    }
  }, 180_000);

  // The release's recount of what holds each task, planned without statistics of tasks just
  // written, read the pipeline's tasks once for each task: 10 s a slice of 1,000 under the write
  // lock, and every writer of every project waited (bench/README.md, the chain's max).
  it.runIf(onPostgres)(
    'gathers the statistics of tasks before it releases a pipeline of 1,000 tasks',
    async () => {
      const database = new pg.Client({ connectionString: server.database });
      await database.connect();
      try {
        const analyses = async () => {
          const { rows } = await database.query(
            "SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'tasks'",
          );
          return Number(rows[0]?.analyze_count ?? 0);
        };
        const before = await analyses();
        const { client } = await projectWith(server, [
          task('noop', { steps: [{ command: 'true' }] }),
          pipeline(
            'wide',
            Array.from({ length: RELEASE_SLICE }, (_, i) => ({ name: `e${i}`, task: 'noop' })),
          ),
          command('go', ['wide']),
        ]);
        const pipelineId = await execute(client, 'go');
        expect((await finished(client, pipelineId, 150_000)).status).toBe('successful');
        // Statistics reach pg_stat_user_tables within a second or so of the transaction's end.
        expect(await waitFor(analyses, (count) => count > before)).toBeGreaterThan(before);
      } finally {
        await database.end();
      }
    },
    180_000,
  );

  it('restarts a chain from its failed entry: the entries before it stay, those after run', async () => {
    // e20 fails once (until its marker exists), which aborts the rest.
    const marker = join(dir, 'failed-once');
    const { client } = await projectWith(server, [
      task('noop', { steps: [{ command: 'true' }] }),
      task('once', {
        environment: { MARKER: marker },
        steps: [{ code: '[ -e "$MARKER" ] || { touch "$MARKER"; exit 3; }' }],
      }),
      pipeline('long', [
        ...chain(20, 'noop'),
        { name: 'e20', task: 'once', dependencies: ['e19'] },
        ...chain(40, 'noop').slice(21),
      ]),
      command('go', ['long']),
    ]);
    const pipelineId = await execute(client, 'go');
    expect((await finished(client, pipelineId)).status).toBe('failed');
    const before = await allTasks(client, pipelineId);
    expect(before.map((t) => t.status)).toEqual([
      ...Array(20).fill('successful'),
      'failed',
      ...Array(19).fill('aborted'),
    ]);
    await client.POST('/pipelines/id/{id}/restart_from_failure', { params: { path: { id: pipelineId } } });
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const after = await allTasks(client, pipelineId);
    expect(after.every((t) => t.status === 'successful')).toBe(true);
    // The first twenty did not run again.
    expect(after.slice(0, 20).map((t) => t.start_time)).toEqual(before.slice(0, 20).map((t) => t.start_time));
  });
});

describe('a pipeline too large for one transaction', () => {
  // 130 entries of 10 instances: more task instances than one transaction writes.
  const wide = Array.from({ length: 130 }, (_, i) => ({ name: `e${i}`, task: 'noop', nb_instances: 10 }));
  const specs = [
    task('noop', { steps: [{ command: 'true' }] }),
    pipeline('wide', wide, { concurrent: true }),
    command('go', ['wide']),
  ];

  it('has every task once executed, and runs them all', async () => {
    expect(wide.length * 10).toBeGreaterThan(2 * INSTANTIATION_BATCH);
    const { client } = await projectWith(server, specs);
    const pipelineId = await execute(client, 'go');
    const { data } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId, size: 1 } } });
    expect(data?.elements).toHaveLength(1);
    expect((await allTasks(client, pipelineId)).length).toBe(1300);
    expect((await finished(client, pipelineId, 120_000)).status).toBe('successful');
    expect((await allTasks(client, pipelineId)).every((t) => t.status === 'successful')).toBe(true);
  }, 150_000);

  it('runs none of its tasks before the last one is written, and completes where it was left', async () => {
    const { project, client } = await projectWith(server, specs);
    const store = server.store;
    const id = await makePipeline(project, 'wide');
    expect(await store.tasks.countOfPipeline(id)).toBe(INSTANTIATION_BATCH);
    expect(await store.pipelines.pendingInstantiationIds()).toContain(id);
    // Held: none of its tasks is ready to be claimed.
    expect(await store.tasks.anyRunnable(new Date().toISOString(), [])).toBe(false);
    // The scheduler writes the rest as it looks for work, as after a crash, then runs them.
    server.scheduler.wakeUp();
    expect((await finished(client, id, 120_000)).status).toBe('successful');
    expect(await store.tasks.countOfPipeline(id)).toBe(1300);
  }, 150_000);
});

describe('a pipeline restarted while its tasks are written', () => {
  it('counts what holds each task afresh once all exist, so none runs early and none waits forever', async () => {
    const { project, client } = await projectWith(server, [
      task('noop', { steps: [{ command: 'true' }] }),
      pipeline('stages', stages, { concurrent: true }),
    ]);
    const store = server.store;
    // Made, aborted and restarted before its second batch is written: no turn of the event loop
    // between them, so the scheduler cannot write the rest first.
    const id = await makePipeline(project, 'stages');
    await server.services.pipelines.abort(project, id);
    await server.services.pipelines.restart(project, id);
    expect(await store.tasks.countOfPipeline(id)).toBe(INSTANTIATION_BATCH);
    server.scheduler.wakeUp();
    expect((await finished(client, id, 120_000)).status).toBe('successful');
    await expectStagesInOrder(client, id);
  }, 150_000);
});

describe('a pipeline whose tasks are released a slice at a time', () => {
  it('holds the tasks of slices not yet released through a restart, and carries on after a failure', async () => {
    expect(1300).toBeGreaterThan(RELEASE_SLICE);
    const { project, client } = await projectWith(server, [
      task('noop', { steps: [{ command: 'true' }] }),
      pipeline('stages', stages, { concurrent: true }),
    ]);
    const store = server.store;
    const id = await makePipeline(project, 'stages');
    // Every task is written and the first slice released; the second slice fails, as a crash
    // would end it. Tasks of the first may have started meanwhile.
    let slices = 0;
    const interrupted: Store = {
      ...store,
      transaction: (fn) =>
        store.transaction((tx) =>
          fn({
            ...tx,
            tasks: {
              ...tx.tasks,
              recountSlice: async (...slice) => {
                slices += 1;
                if (slices === 2) throw new Error('interrupted');
                await tx.tasks.recountSlice(...slice);
              },
            },
          }),
        ),
    };
    await expect(completeInstantiations(interrupted, [id])).rejects.toThrow('interrupted');
    expect(await store.tasks.countOfPipeline(id)).toBe(1300);
    expect(await store.pipelines.pendingInstantiationIds()).toContain(id);
    // Restarted between the two slices: the tasks of the first are counted as released, those
    // of the second still held until the scheduler releases them.
    await server.services.pipelines.abort(project, id);
    await server.services.pipelines.restart(project, id);
    server.scheduler.wakeUp();
    expect((await finished(client, id, 120_000)).status).toBe('successful');
    expect(await store.pipelines.pendingInstantiationIds()).not.toContain(id);
    await expectStagesInOrder(client, id);
  }, 150_000);
});

describe('the queue of a non-concurrent pipeline', () => {
  const specs = (file: string) => [
    // Runs until its pipeline's file exists.
    task('hold', {
      environment: { DIR: dir },
      steps: [
        {
          code: `i=0; until [ -e "$DIR/${file}-$PIPEWRIGHT_PIPELINE_ID" ]; do i=$((i+1)); [ $i -gt 1200 ] && exit 9; sleep 0.05; done`,
        },
      ],
    }),
    pipeline('solo', [{ task: 'hold' }]),
    command('go', ['solo']),
  ];
  const release = (file: string, pipelineId: string) =>
    import('node:fs').then((fs) => fs.writeFileSync(join(dir, `${file}-${pipelineId}`), ''));
  const statusOf = async (client: ApiClient, id: string) =>
    (await client.GET('/pipelines/id/{id}', { params: { path: { id } } })).data?.status;

  it('admits the oldest waiting pipeline when the running one is aborted, and one at a time', async () => {
    const { client } = await projectWith(server, specs('abort'));
    const [first, second, third] = [
      await execute(client, 'go'),
      await execute(client, 'go'),
      await execute(client, 'go'),
    ];
    await waitFor(
      () => statusOf(client, first),
      (s) => s === 'started',
    );
    await client.POST('/pipelines/id/{id}/abort', { params: { path: { id: first } } });
    await waitFor(
      () => statusOf(client, second),
      (s) => s === 'started',
    );
    expect(await statusOf(client, third)).toBe('created');
    await release('abort', second);
    expect((await finished(client, second)).status).toBe('successful');
    await release('abort', third);
    const [b, c] = [await finished(client, second), await finished(client, third)];
    expect(c.status).toBe('successful');
    expect(Date.parse(c.start_time ?? '')).toBeGreaterThanOrEqual(Date.parse(b.end_time ?? ''));
  });

  it('puts a restarted pipeline behind the one running', async () => {
    const { client } = await projectWith(server, specs('restart'));
    const first = await execute(client, 'go');
    await release('restart', first);
    expect((await finished(client, first)).status).toBe('successful');
    const second = await execute(client, 'go');
    await waitFor(
      () => statusOf(client, second),
      (s) => s === 'started',
    );
    await client.POST('/pipelines/id/{id}/restart', { params: { path: { id: first } } });
    // Its file exists, so it would end at once if it ran; it waits instead.
    const [waiting] = await tasksOf(client, first);
    expect(waiting?.status).toBe('created');
    await release('restart', second);
    const b = await finished(client, second);
    expect(b.status).toBe('successful');
    expect((await finished(client, first)).status).toBe('successful');
    // It ran again only once the one running had ended.
    const [again] = await tasksOf(client, first);
    expect(Date.parse(again?.start_time ?? '')).toBeGreaterThanOrEqual(Date.parse(b.end_time ?? ''));
  });
});
