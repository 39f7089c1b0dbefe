import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ApiClient, ApiError, walk } from '@pipewright/client';
import { clientOf, lastLine, runProgram, tempDirs } from '@pipewright/testing';
import { type PostgresCluster, startPostgresCluster } from '@pipewright/testing/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, programStarter } from './program.js';

// The program on PostgreSQL (--database), with a throwaway cluster of its own: where its data
// lives, across restarts and admin commands, and what its clients see while the database is down.

const tempDir = tempDirs();
const start = programStarter();

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgresCluster();
});
afterAll(() => cluster?.stop());

/** A project with a one-step pipeline behind command `go`; returns its id. */
async function projectWithCommand(admin: ApiClient): Promise<string> {
  const { data: project } = await admin.POST('/projects', { body: { name: `p-${Date.now()}` } });
  const projectId = project?.id ?? '';
  await admin.PUT('/projects/id/{id}/resources', {
    params: { path: { id: projectId } },
    body: {
      specs: [
        { type: 'task', version: 1, name: 'hello', data: { steps: [{ code: 'echo hello' }] } },
        { type: 'pipeline', version: 1, name: 'main', data: { tasks: [{ task: 'hello' }] } },
        { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['main'] } },
      ],
    },
  });
  return projectId;
}

/**
 * Two servers on a new database of the cluster, sharing its identity key, with short leases (for
 * short tests) and tasks run as the servers' user (to share directories with the test).
 */
async function twoServers(name: string) {
  const database = await cluster.createDatabase(name);
  const [dirA, dirB] = [tempDir('pipewright-postgres-'), tempDir('pipewright-postgres-')];
  const common = ['--database', database, '--lease', '2', '--task-users', 'off'];
  const a = await start(dirA, common);
  const apiKey = lastLine(a.stdout());
  const b = await start(dirB, [...common, '--identity-key-file', join(dirA, 'identity.key')]);
  return { a, b, dirA, dirB, apiKey };
}

/** Every element of an async iterable (Node 20 has no Array.fromAsync). */
async function collected<T>(elements: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const element of elements) all.push(element);
  return all;
}

/** Executes `go`; resolves to the pipeline's final status. */
async function runGo(client: ApiClient): Promise<string> {
  const { data: go } = await client.GET('/resources/type/{type}/name/{name}', {
    params: { path: { type: 'command', name: 'go' } },
  });
  const { data: execution } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: go?.id ?? '' } },
    body: {},
  });
  const [pipelineId = ''] = execution?.pipeline_ids ?? [];
  return eventually(async () => {
    const { data } = await client.GET('/pipelines/id/{id}', { params: { path: { id: pipelineId } } });
    return data && ['successful', 'failed', 'aborted'].includes(data.status) ? data.status : undefined;
  });
}

describe('pipewright-server --database postgres://...', () => {
  it('keeps its data in that database, across restarts, and its admin commands reach it', async () => {
    const database = await cluster.createDatabase('program_data');
    // A data directory that does not exist yet: the server makes it, as on SQLite.
    const dataDir = join(tempDir('pipewright-postgres-'), 'data');
    const first = await start(dataDir, ['--database', database]);
    const apiKey = lastLine(first.stdout());
    const admin = clientOf(first, dataDir, apiKey);
    const projectId = await projectWithCommand(admin);
    expect(await runGo(clientOf(first, dataDir, apiKey, projectId))).toBe('successful');
    // Nothing went to SQLite.
    expect(existsSync(join(dataDir, 'pipewright.db'))).toBe(false);

    const created = await runProgram([
      'create-organization',
      'other',
      '--admin-email',
      'other@example.test',
      '--database',
      database,
    ]);
    expect(created.code).toBe(0);
    const otherKey = lastLine(created.stdout);
    expect((await clientOf(first, dataDir, otherKey).GET('/org')).data?.name).toBe('other');
    expect(await first.stop()).toBe(0);

    // Started again on the same database: the same data, no new first key, and tasks still run.
    const second = await start(dataDir, ['--database', database]);
    expect(second.stdout()).not.toContain('Its API key is shown only this once');
    const again = clientOf(second, dataDir, apiKey, projectId);
    expect((await again.GET('/pipelines')).data?.elements.map((p) => p.status)).toEqual(['successful']);
    expect(await runGo(again)).toBe('successful');
    expect((await clientOf(second, dataDir, otherKey).GET('/org')).data?.name).toBe('other');
  });

  it('answers 503 while its database is down, and serves again by itself once it is back', async () => {
    const database = await cluster.createDatabase('program_down');
    const dataDir = tempDir('pipewright-postgres-');
    const program = await start(dataDir, ['--database', database]);
    const apiKey = lastLine(program.stdout());
    const admin = clientOf(program, dataDir, apiKey);
    const client = clientOf(program, dataDir, apiKey, await projectWithCommand(admin));
    expect(await runGo(client)).toBe('successful');

    cluster.down();
    try {
      const failure = await admin.POST('/projects', { body: { name: 'while-down' } }).catch((error) => error);
      expect(failure).toBeInstanceOf(ApiError);
      expect(failure).toMatchObject({ status: 503, code: 'service_unavailable' });
    } finally {
      cluster.up();
    }
    // Without a restart of the program: its pool connects anew.
    await eventually(async () => {
      const result = await admin.GET('/org').catch(() => undefined);
      return result?.data?.name;
    });
    expect(await runGo(client)).toBe('successful');
    const { data: projects } = await admin.GET('/projects');
    expect(projects?.elements.map((p) => p.name)).not.toContain('while-down');
  });

  it('makes a second server of the same instance wait, which takes over once the first stops', async () => {
    const database = await cluster.createDatabase('program_standby');
    const firstDir = tempDir('pipewright-postgres-');
    const first = await start(firstDir, ['--database', database]);
    const apiKey = lastLine(first.stdout());
    const projectId = await projectWithCommand(clientOf(first, firstDir, apiKey));

    // A copy of the first one's data directory: the same instance, as a standby machine would be.
    let log = '';
    const secondDir = tempDir('pipewright-postgres-');
    cpSync(join(firstDir, 'instance'), join(secondDir, 'instance'));
    // The identity key goes with the database: every server of it opens the same identities.
    const key = ['--identity-key-file', join(firstDir, 'identity.key')];
    const starting = start(secondDir, ['--database', database, ...key], (stderr) => {
      log = stderr;
    });
    await eventually(() =>
      log.includes('waiting for the server of this instance to stop') ? true : undefined,
    );
    expect(log).not.toContain('"message":"listening"');
    expect(await first.stop()).toBe(0);

    const second = await starting;
    // The first server's certificate is not the second's: the key and the data are the database's.
    const client = clientOf(second, secondDir, apiKey, projectId);
    expect(await runGo(client)).toBe('successful');
  });

  it('loses nothing when one of two servers is killed under load: the other ends and retries its tasks', async () => {
    const { a, b, dirA, dirB, apiKey } = await twoServers('program_two');
    const shared = tempDir('pipewright-attempts-');
    const admin = clientOf(a, dirA, apiKey);
    const { data: project } = await admin.POST('/projects', { body: { name: 'two-servers' } });
    const projectId = project?.id ?? '';
    // Each attempt holds a lock while it runs (its shell and its sleep hold the file open): on
    // its task, or on its pipeline when only one such pipeline may run at a time (HOLD; steps
    // run with `set -u`). The kernel lets a lock go with the last process holding it, killed or
    // not: one that finds it held runs beside another attempt still alive, and says so. (A
    // process id written down would not do: ids are reused, 32,768 of them here.)
    const attempt = [
      '[ -n "$HOLD" ] || HOLD="$PIPEWRIGHT_TASK_ID"',
      'exec 9>>"$DIR/$HOLD.lock"',
      'flock --nonblock 9 || echo "$HOLD: task $PIPEWRIGHT_TASK_ID" >> "$DIR/overlaps"',
      'sleep "$SLEEP"',
    ].join('\n');
    const holding = (name: string, environment: Record<string, string>) => ({
      type: 'task' as const,
      version: 1 as const,
      name,
      data: { environment: { DIR: shared, ...environment }, steps: [{ code: attempt }] },
    });
    await admin.PUT('/projects/id/{id}/resources', {
      params: { path: { id: projectId } },
      body: {
        specs: [
          holding('work', { SLEEP: '2', HOLD: '' }),
          holding('one-at-a-time', { SLEEP: '0.2', HOLD: 'serial' }),
          { type: 'task', version: 1, name: 'noop', data: { steps: [{ command: 'true' }] } },
          {
            type: 'pipeline',
            version: 1,
            name: 'main',
            data: { concurrent: true, tasks: [{ task: 'work', nb_retries: 3 }] },
          },
          // Not concurrent (the default): its pipelines queue, across both servers.
          {
            type: 'pipeline',
            version: 1,
            name: 'serial',
            data: { tasks: [{ task: 'one-at-a-time', nb_retries: 3 }] },
          },
          {
            type: 'pipeline',
            version: 1,
            name: 'ticked',
            data: { concurrent: true, tasks: [{ task: 'noop', nb_retries: 3 }] },
          },
          {
            type: 'trigger',
            version: 1,
            name: 'push',
            data: { connector: 'custom', event: 'push', pipelines: ['main', 'serial'] },
          },
          {
            type: 'trigger',
            version: 1,
            name: 'every-second',
            data: { connector: 'time', event: 'tick', parameters: { periodic: 1 }, pipelines: ['ticked'] },
          },
        ],
      },
    });
    const clients = [clientOf(a, dirA, apiKey, projectId), clientOf(b, dirB, apiKey, projectId)];
    const onB = clients[1] as ApiClient;
    // Events sent to both servers in turn: those answered 2xx must all be there in the end.
    const acknowledged: string[] = [];
    const push = (round: number) =>
      Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const client = clients[i % 2] as ApiClient;
          const sent = await client
            .POST('/events', { body: { connector: 'custom', name: 'push', data: { round, i } } })
            .catch(() => undefined);
          for (const event of sent?.data ?? []) acknowledged.push(event.id);
        }),
      );
    await push(1);
    // Killed while both run tasks.
    await eventually(async () => {
      const { data } = await onB.GET('/tasks', { params: { query: { status: 'started', size: 100 } } });
      return (data?.elements.length ?? 0) >= 4 ? true : undefined;
    });
    await a.stop('SIGKILL');
    await push(2);
    expect(acknowledged.length).toBeGreaterThanOrEqual(18);

    // B ends A's attempts once A's lease expires, and retries them.
    const pipelines = await eventually(async () => {
      const all = await collected(walk(onB, '/pipelines', {}));
      const pushed = all.filter((p) => p.name !== 'ticked');
      return pushed.length === 2 * acknowledged.length &&
        all.every((p) => ['successful', 'failed', 'aborted'].includes(p.status))
        ? all
        : undefined;
    }, 120_000);
    // Every attempt cut short had retries left: every pipeline succeeds.
    expect(pipelines.filter((p) => p.status !== 'successful').map((p) => [p.name, p.status])).toEqual([]);
    for (const id of acknowledged) {
      expect((await onB.GET('/events/id/{id}', { params: { path: { id } } })).data?.id).toBe(id);
    }
    const tasks = await collected(walk(onB, '/tasks', {}));
    // Some of A's attempts were cut short, and ran again.
    expect(tasks.some((t) => t.retry > 0)).toBe(true);
    const overlaps = join(shared, 'overlaps');
    expect(existsSync(overlaps) ? readFileSync(overlaps, 'utf8') : '').toBe('');
    // The ticks of the time trigger: each second once, none lost across the kill.
    const ticks = await collected(walk(onB, '/events', { connector: 'time' }));
    const seconds = ticks.map((e) => Date.parse(e.event_time) / 1000).sort((x, y) => x - y);
    expect(seconds.length).toBeGreaterThan(2);
    expect(seconds).toEqual(seconds.map((_, i) => (seconds[0] as number) + i));
  });

  it('serves again by itself after PostgreSQL restarts under load, and loses nothing it acknowledged', async () => {
    const { a, b, dirA, dirB, apiKey } = await twoServers('program_restart');
    const admin = clientOf(a, dirA, apiKey);
    const { data: project } = await admin.POST('/projects', { body: { name: 'through-a-restart' } });
    const projectId = project?.id ?? '';
    await admin.PUT('/projects/id/{id}/resources', {
      params: { path: { id: projectId } },
      body: {
        specs: [
          {
            type: 'task',
            version: 1,
            name: 'nap',
            data: { steps: [{ command: 'sleep', arguments: ['0.3'] }] },
          },
          {
            type: 'pipeline',
            version: 1,
            name: 'main',
            data: { concurrent: true, tasks: [{ task: 'nap', nb_retries: 3 }] },
          },
          {
            type: 'trigger',
            version: 1,
            name: 'push',
            data: { connector: 'custom', event: 'push', pipelines: ['main'] },
          },
        ],
      },
    });
    const clients = [clientOf(a, dirA, apiKey, projectId), clientOf(b, dirB, apiKey, projectId)];
    const acknowledged: string[] = [];
    const refusals: number[] = [];
    let sending = true;
    // Events to both servers in turn, one at a time, until told to stop (at most 2,000).
    const load = (async () => {
      for (let n = 0; sending && n < 2_000; n += 1) {
        const client = clients[n % 2] as ApiClient;
        const sent = await client
          .POST('/events', { body: { connector: 'custom', name: 'push', data: { n } } })
          .catch((error: unknown) => {
            refusals.push(error instanceof ApiError ? error.status : 0);
            return undefined;
          });
        for (const event of sent?.data ?? []) acknowledged.push(event.id);
      }
    })();
    await eventually(() => (acknowledged.length >= 10 ? true : undefined));
    cluster.down();
    try {
      await eventually(() => (refusals.length >= 4 ? true : undefined));
    } finally {
      cluster.up();
    }
    const before = acknowledged.length;
    // Both serve again, by themselves.
    await eventually(() => (acknowledged.length >= before + 10 ? true : undefined));
    sending = false;
    await load;
    expect(new Set(refusals)).toEqual(new Set([503]));

    const onB = clients[1] as ApiClient;
    const pipelines = await eventually(async () => {
      const all = await collected(walk(onB, '/pipelines', {}));
      return all.length === acknowledged.length &&
        all.every((p) => ['successful', 'failed', 'aborted'].includes(p.status))
        ? all
        : undefined;
    }, 120_000);
    expect(pipelines.filter((p) => p.status !== 'successful').map((p) => p.status)).toEqual([]);
    const stored = new Set((await collected(walk(onB, '/events', {}))).map((event) => event.id));
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
  });
});
