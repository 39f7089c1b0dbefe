import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ApiClient, getScratchpadEntry, setScratchpadEntry } from '@pipewright/client';
import { clientOf, lastLine, type RunningProgram, tempDirs } from '@pipewright/testing';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { alive, eventually, programStarter } from './program.js';

// Crash safety and graceful stop, with the real program: SIGKILL in the middle of running
// pipelines, then a start on the same data directory.

const tempDir = tempDirs({ forTasks: true });
const start = programStarter();

/** A project running `specs` through command `go`; returns the client and the pipeline. */
async function launch(
  admin: ApiClient,
  server: RunningProgram,
  dataDir: string,
  apiKey: string,
  specs: unknown[],
) {
  const { data: project } = await admin.POST('/projects', { body: { name: `p-${Date.now()}` } });
  const pipelines = specs
    .filter((s) => (s as { type: string }).type === 'pipeline')
    .map((s) => (s as { name: string }).name);
  await admin.PUT('/projects/id/{id}/resources', {
    params: { path: { id: project?.id ?? '' } },
    body: {
      specs: [
        ...specs,
        { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines } },
      ] as never,
    },
  });
  const client = clientOf(server, dataDir, apiKey, project?.id);
  const { data: go } = await client.GET('/resources/type/{type}/name/{name}', {
    params: { path: { type: 'command', name: 'go' } },
  });
  const { data: execution } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: go?.id ?? '' } },
    body: {},
  });
  return { projectId: project?.id ?? '', pipelineIds: execution?.pipeline_ids ?? [] };
}

const FINAL = ['successful', 'failed', 'aborted'];

async function settled(client: ApiClient, pipelineId: string) {
  let last = '';
  await eventually(async () => {
    last =
      (await client.GET('/pipelines/id/{id}', { params: { path: { id: pipelineId } } })).data?.status ?? '';
    return FINAL.includes(last) ? last : undefined;
  });
  return (
    (await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId } } })).data?.elements ?? []
  );
}

/** The spawner process of a server (runner/spawner.ts): its child running pipewright-spawner. */
function spawnersOf(serverPid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return (
          parent === serverPid &&
          readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('pipewright-spawner')
        );
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/**
 * Runs two long steps (one task with a retry left, one without), kills the server with SIGKILL
 * (and its spawner process with it when `withSpawners`), checks what `afterCrash` says of the
 * orphaned steps, starts a server again and checks how the tasks ended and that nothing
 * answered 2xx was lost.
 */
async function crashAndRestart(options: {
  withSpawners: boolean;
  extra?: string[];
  /** Checks the orphaned steps before the next start; returns the pids that start must spare. */
  afterCrash: (stepPids: number[], dataDir: string) => Promise<number[]>;
}) {
  const dataDir = tempDir('pipewright-crash-');
  const shared = tempDir('pipewright-crash-shared-');
  const first = await start(dataDir, options.extra);
  const apiKey = lastLine(first.stdout());
  const admin = clientOf(first, dataDir, apiKey);
  // Records its pid, then runs long; on its second attempt (after the crash) it succeeds.
  const longStep = (name: string) =>
    `if [ -e "$DIR/${name}.pid" ]; then echo second; exit 0; fi\necho $$ > "$DIR/${name}.pid"\nsleep 60`;
  const specs = [
    {
      type: 'task',
      version: 1,
      name: 'once',
      data: { environment: { DIR: shared }, steps: [{ code: longStep('once') }] },
    },
    {
      type: 'task',
      version: 1,
      name: 'again',
      data: { environment: { DIR: shared }, steps: [{ code: longStep('again') }] },
    },
    { type: 'pipeline', version: 1, name: 'no-retry', data: { tasks: [{ task: 'once' }] } },
    { type: 'pipeline', version: 1, name: 'retry', data: { tasks: [{ task: 'again', nb_retries: 1 }] } },
  ];
  const { projectId, pipelineIds } = await launch(admin, first, dataDir, apiKey, specs);
  await eventually(() =>
    existsSync(join(shared, 'once.pid')) && existsSync(join(shared, 'again.pid')) ? true : undefined,
  );
  const pids = ['once', 'again'].map((name) => Number(readFileSync(join(shared, `${name}.pid`), 'utf8')));
  const client = clientOf(first, dataDir, apiKey, projectId);
  await setScratchpadEntry(client, pipelineIds[0] ?? '', 'written', 'before the crash');
  // Both steps are recorded as running, with their process groups.
  await eventually(async () => {
    const steps = await Promise.all(
      pipelineIds.map(async (id) => {
        const [task] =
          (await client.GET('/tasks', { params: { query: { pipeline_id: id } } })).data?.elements ?? [];
        const { data } = await client.GET('/tasks/id/{id}/steps', {
          params: { path: { id: task?.id ?? '' } },
        });
        return data?.[0]?.status;
      }),
    );
    return steps.every((status) => status === 'started') ? true : undefined;
  });

  const spawners = spawnersOf(first.process.pid ?? 0);
  expect(spawners.length).toBeGreaterThan(0);
  // Frozen first, so that neither they nor the server act on the other's death in between.
  if (options.withSpawners) for (const pid of spawners) process.kill(pid, 'SIGSTOP');
  expect(await first.stop('SIGKILL')).toBeNull();
  if (options.withSpawners) for (const pid of spawners) process.kill(pid, 'SIGKILL');
  const spared = await options.afterCrash(pids, dataDir);

  const second = await start(dataDir, options.extra);
  try {
    const stopped = pids.filter((pid) => !spared.includes(pid));
    await eventually(() => (stopped.some(alive) ? undefined : true));
    expect(spared.every(alive)).toBe(true);
    for (const pid of spared) process.kill(pid, 'SIGKILL');
    const after = clientOf(second, dataDir, apiKey, projectId);
    const [noRetry, retry] = await Promise.all(pipelineIds.map((id) => settled(after, id)));
    expect(noRetry?.[0]).toMatchObject({
      status: 'failed',
      failure_message: 'interrupted by a server restart',
    });
    expect(retry?.[0]).toMatchObject({ status: 'successful', retry: 1 });
    const { data: failedPipeline } = await after.GET('/pipelines/id/{id}', {
      params: { path: { id: pipelineIds[0] ?? '' } },
    });
    expect(failedPipeline?.status).toBe('failed');
    expect(await getScratchpadEntry(after, pipelineIds[0] ?? '', 'written')).toBe('before the crash');
    const { data: steps } = await after.GET('/tasks/id/{id}/steps', {
      params: { path: { id: retry?.[0]?.id ?? '' } },
    });
    expect(steps?.map((s) => [s.attempt, s.status])).toEqual([
      [0, 'aborted'],
      [1, 'successful'],
    ]);
  } finally {
    await second.stop();
  }
}

describe('a server killed with SIGKILL', () => {
  it('has its steps stopped by its spawner process; the next start fails or retries their tasks and loses no accepted write', async () => {
    await crashAndRestart({
      withSpawners: false,
      afterCrash: async (stepPids) => {
        // Before any restart.
        await eventually(() => (stepPids.some(alive) ? undefined : true));
        return [];
      },
    });
  });

  it('with its spawner process: the next start stops the orphaned steps by their recorded process groups, only while their numbers name them', async () => {
    await crashAndRestart({
      withSpawners: true,
      // Without task users, which the next start would sweep whole.
      extra: ['--task-users', 'off'],
      afterCrash: async (stepPids, dataDir) => {
        expect(stepPids.every(alive)).toBe(true); // orphans, until the next start
        // As if the first step's number had been reused by another process since: its leader
        // recorded with another start time. That group must be spared.
        const db = new Database(join(dataDir, 'pipewright.db'));
        try {
          const rows = db
            .prepare<[], { process_group: number; process_identity: string }>(
              "SELECT process_group, process_identity FROM step_executions WHERE status = 'started'",
            )
            .all();
          expect(rows.map((row) => row.process_group).sort()).toEqual([...stepPids].sort());
          const [boot] = rows[0]?.process_identity.split('/') ?? [];
          db.prepare('UPDATE step_executions SET process_identity = ? WHERE process_group = ?').run(
            `${boot}/1`,
            stepPids[0],
          );
        } finally {
          db.close();
        }
        return [stepPids[0] ?? 0];
      },
    });
  });
});

describe('a server stopped with SIGTERM', () => {
  it('lets running steps finish, then exits 0', async () => {
    const dataDir = tempDir('pipewright-stop-');
    const shared = tempDir('pipewright-stop-shared-');
    const server = await start(dataDir);
    const apiKey = lastLine(server.stdout());
    const admin = clientOf(server, dataDir, apiKey);
    const gate = `touch "$DIR/started"; i=0; while [ ! -e "$DIR/open" ]; do i=$((i+1)); [ "$i" -gt 1200 ] && exit 7; sleep 0.05; done`;
    const { projectId, pipelineIds } = await launch(admin, server, dataDir, apiKey, [
      {
        type: 'task',
        version: 1,
        name: 'gated',
        data: { environment: { DIR: shared }, steps: [{ code: gate }] },
      },
      { type: 'pipeline', version: 1, name: 'main', data: { tasks: [{ task: 'gated' }] } },
    ]);
    await eventually(() => (existsSync(join(shared, 'started')) ? true : undefined));
    const exited = server.stop('SIGTERM');
    // Still running its step: let it finish now.
    await eventually(() => (server.stderr().includes('waiting for running tasks') ? true : undefined));
    writeFileSync(join(shared, 'open'), '');
    expect(await exited).toBe(0);

    const again = await start(dataDir);
    try {
      const tasks = await settled(clientOf(again, dataDir, apiKey, projectId), pipelineIds[0] ?? '');
      expect(tasks[0]).toMatchObject({ status: 'successful', retry: 0 });
    } finally {
      await again.stop();
    }
  });

  it('stops steps still running at the deadline, and their tasks end', async () => {
    const dataDir = tempDir('pipewright-deadline-');
    const server = await start(dataDir, ['--stop-deadline', '1', '--abort-grace', '1']);
    const apiKey = lastLine(server.stdout());
    const admin = clientOf(server, dataDir, apiKey);
    const { projectId, pipelineIds } = await launch(admin, server, dataDir, apiKey, [
      { type: 'task', version: 1, name: 'endless', data: { steps: [{ code: "trap '' TERM; sleep 60" }] } },
      { type: 'pipeline', version: 1, name: 'main', data: { tasks: [{ task: 'endless' }] } },
    ]);
    const client = clientOf(server, dataDir, apiKey, projectId);
    await eventually(async () => {
      const { data } = await client.GET('/pipelines/id/{id}', {
        params: { path: { id: pipelineIds[0] ?? '' } },
      });
      return data?.status === 'started' ? true : undefined;
    });
    expect(await server.stop('SIGTERM')).toBe(0);
    const again = await start(dataDir);
    try {
      const tasks = await settled(clientOf(again, dataDir, apiKey, projectId), pipelineIds[0] ?? '');
      expect(tasks[0]).toMatchObject({ status: 'failed', failure_message: 'interrupted by a server stop' });
    } finally {
      await again.stop();
    }
  });
});
