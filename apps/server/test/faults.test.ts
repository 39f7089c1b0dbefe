import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { join } from 'node:path';
import { connect as connectTls, type SecureVersion } from 'node:tls';
import { type ApiClient, ApiError, getScratchpadEntry, setScratchpadEntry, walk } from '@pipewright/client';
import { certificateFile, clientOf, lastLine, type RunningProgram, tempDirs } from '@pipewright/testing';
import type { Schemas } from '@pipewright/types';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { alive, eventually, programStarter } from './program.js';

// Faults, with the real program: SIGKILL under mixed load then a restart, storage that
// refuses writes, a step that prints far too much, steps that leave children ignoring
// SIGTERM, slow clients, and the program's limits. Each test prints its figures as the
// reliability tests of packages/server do (`npm run reliability` sums them up).

type Spec = Schemas['ResourceSpec'];

const tempDir = tempDirs();
const startProgram = programStarter();

function recordFigures(area: string, figures: Record<string, number>): void {
  process.stdout.write(`reliability figures ${JSON.stringify({ area, ...figures })}\n`);
}

interface Running {
  server: RunningProgram;
  dataDir: string;
  apiKey: string;
  admin: ApiClient;
  client(projectId?: string): ApiClient;
}

/** Starts the program on `dataDir` (a new one unless given), with its first key. */
async function start(extra: string[] = [], dataDir = tempDir('pipewright-faults-'), apiKey?: string) {
  const server = await startProgram(dataDir, extra);
  const key = apiKey ?? lastLine(server.stdout());
  const client = (projectId?: string) => clientOf(server, dataDir, key, projectId);
  return { server, dataDir, apiKey: key, admin: client(), client } satisfies Running;
}

/** A new project with `specs` installed; returns its id and a client inside it. */
async function projectWith(running: Running, specs: Spec[]) {
  const { data: project } = await running.admin.POST('/projects', { body: { name: `p-${Date.now()}` } });
  const id = project?.id ?? '';
  await running.admin.PUT('/projects/id/{id}/resources', { params: { path: { id } }, body: { specs } });
  return { projectId: id, client: running.client(id) };
}

async function resourceId(client: ApiClient, type: Spec['type'], name: string): Promise<string> {
  const { data } = await client.GET('/resources/type/{type}/name/{name}', {
    params: { path: { type, name } },
  });
  return data?.id ?? '';
}

async function execute(client: ApiClient, commandId: string) {
  const { data } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: commandId } },
    body: {},
  });
  if (!data) throw new Error('no execution');
  return data;
}

const FINAL = new Set(['successful', 'failed', 'aborted']);

async function settled(client: ApiClient, pipelineId: string) {
  return eventually(async () => {
    const { data } = await client.GET('/pipelines/id/{id}', { params: { path: { id: pipelineId } } });
    return data && FINAL.has(data.status) ? data : undefined;
  });
}

async function tasksOf(client: ApiClient, pipelineId: string) {
  const { data } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId, size: 100 } } });
  return data?.elements ?? [];
}

/** The resident memory of a process, in MiB (Linux). */
function rssMiB(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) / 1024;
}

const task = (name: string, code: string, environment: Record<string, string> = {}): Spec => ({
  type: 'task',
  version: 1,
  name,
  data: { environment, steps: [{ code }] },
});
const pipeline = (name: string, tasks: string[], concurrent = true): Spec => ({
  type: 'pipeline',
  version: 1,
  name,
  data: { concurrent, tasks: tasks.map((t) => ({ task: t })) },
});
const command = (name: string, pipelines: string[]): Spec => ({
  type: 'command',
  version: 1,
  name,
  data: { parameters: [], pipelines },
});

describe('a server killed with SIGKILL under mixed load', () => {
  it('keeps every write it answered 2xx, applies no install by halves, and finishes every pipeline', async () => {
    const first = await start(['--rate-limit', '0']);
    const base: Spec[] = [
      task('work', 'sleep 0.1; echo done'),
      pipeline('main', ['work']),
      command('go', ['main']),
      {
        type: 'trigger',
        version: 1,
        name: 'on-ping',
        data: { connector: 'custom', event: 'ping', pipelines: ['main'] },
      },
    ];
    // Install k replaces the markers of install k-1 by five of its own, in one transaction.
    const markers = (k: number) => [1, 2, 3, 4, 5].map((i) => task(`mark-${k}-${i}`, `echo ${k}`));
    const { projectId, client } = await projectWith(first, [...base, ...markers(0)]);
    const go = await resourceId(client, 'command', 'go');
    const target = (await execute(client, go)).pipeline_ids[0] ?? '';

    const acked = {
      installs: 0,
      executions: [] as string[],
      pipelines: [] as string[],
      events: [] as string[],
      entries: [] as string[],
    };
    let attempts = 0;
    let failures5xx = 0;
    let killed = false;
    // The kill comes once every worker has had `writes` of its kind acknowledged, while the
    // load goes on. Each worker stops after MOST times as many, so that the load is bounded by
    // a count, not by time: a slow machine does the work of a fast one, and the restart has as
    // many pipelines to end.
    const writes = { installs: 5, executions: 8, events: 15, entries: 15 };
    const MOST = 4;
    /** Runs `write` up to `most` times, or until the server is gone; it records its 2xx answers. */
    const worker = async (most: number, write: (n: number) => Promise<void>) => {
      for (let n = 1; n <= most && !killed; n += 1) {
        attempts += 1;
        try {
          await write(n);
        } catch (error) {
          if (error instanceof ApiError && error.status >= 500) failures5xx += 1;
          if (!(error instanceof ApiError)) return; // the connection is gone
        }
      }
    };
    const executed = [0, 0];
    const load = Promise.all([
      worker(MOST * writes.installs, async (k) => {
        await first.admin.PUT('/projects/id/{id}/resources', {
          params: { path: { id: projectId } },
          body: { specs: [...base, ...markers(k)] },
        });
        acked.installs = k;
      }),
      ...[0, 1].map((w) =>
        worker(MOST * writes.executions, async () => {
          const execution = await execute(client, go);
          executed[w] = (executed[w] ?? 0) + 1;
          acked.executions.push(execution.id);
          acked.pipelines.push(...execution.pipeline_ids);
        }),
      ),
      worker(MOST * writes.events, async (n) => {
        const { data } = await client.POST('/events', {
          body: { connector: 'custom', name: 'ping', data: { n } },
        });
        acked.events.push(...(data ?? []).map((e) => e.id));
      }),
      worker(MOST * writes.entries, async (n) => {
        await setScratchpadEntry(client, target, `entry-${n}`, `value ${n}`);
        acked.entries.push(`entry-${n}`);
      }),
    ]);
    // Mid-load: every worker has had its number of writes acknowledged.
    await eventually(() =>
      acked.installs >= writes.installs &&
      executed.every((count) => count >= writes.executions) &&
      acked.events.length >= writes.events &&
      acked.entries.length >= writes.entries
        ? true
        : undefined,
    );
    expect(await first.server.stop('SIGKILL')).toBeNull();
    killed = true;
    await load;

    const second = await start(['--rate-limit', '0'], first.dataDir, first.apiKey);
    try {
      const after = second.client(projectId);
      let lost = 0;
      const present = async (read: () => Promise<unknown>) => {
        try {
          await read();
        } catch {
          lost += 1;
        }
      };
      for (const id of acked.executions) {
        await present(() => after.GET('/command_executions/id/{id}', { params: { path: { id } } }));
      }
      for (const id of acked.pipelines) {
        await present(() => after.GET('/pipelines/id/{id}', { params: { path: { id } } }));
      }
      for (const id of acked.events) {
        await present(() => after.GET('/events/id/{id}', { params: { path: { id } } }));
      }
      for (const key of acked.entries) {
        await present(async () => {
          if ((await getScratchpadEntry(after, target, key)) !== `value ${key.slice(6)}`)
            throw new Error(key);
        });
      }
      // The install in place is one whole install: the last acknowledged, or the one in flight.
      const { data: resources } = await after.GET('/resources', { params: { query: { size: 100 } } });
      const marks = (resources?.elements ?? []).map((r) => r.spec.name).filter((n) => n.startsWith('mark-'));
      const installs = new Set(marks.map((n) => Number(n.split('-')[1])));
      expect(installs.size).toBe(1);
      expect(marks).toHaveLength(5);
      const installed = [...installs][0] ?? -1;
      if (installed < acked.installs) lost += 1;

      // Every pipeline, those cut by the kill included, ends; each has its task.
      const pipelines = [];
      for await (const found of walk(after, '/pipelines', { size: 100 })) pipelines.push(found);
      for (const { id } of pipelines) {
        expect(FINAL.has((await settled(after, id)).status)).toBe(true);
        expect(await tasksOf(after, id)).toHaveLength(1);
      }
      expect(lost).toBe(0);
      expect(failures5xx).toBe(0);
      recordFigures('sigkill under load', {
        requests: attempts,
        failures5xx,
        writesLost: lost,
        writesAcknowledged:
          acked.installs + acked.executions.length + acked.events.length + acked.entries.length,
        installInPlace: installed,
        lastInstallAcknowledged: acked.installs,
        pipelines: pipelines.length,
      });
    } finally {
      await second.server.stop();
    }
  });
});

describe('storage that refuses writes', () => {
  it('answers writes 503 service_unavailable and reads 200, then recovers, and nothing corrupts', async () => {
    const running = await start();
    const pid = running.server.process.pid ?? 0;
    const stamp = Date.now();
    let requests = 0;
    /** The status of a write, and its error code. */
    const outcome = async (write: () => Promise<{ response: Response }>) => {
      requests += 1;
      try {
        return { status: (await write()).response.status };
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        return { status: error.status, code: error.code };
      }
    };
    const create = (name: string) => () => running.admin.POST('/projects', { body: { name } });
    const { data: before } = await running.admin.POST('/projects', { body: { name: `before-${stamp}` } });
    const install = () =>
      running.admin.PUT('/projects/id/{id}/resources', {
        params: { path: { id: before?.id ?? '' } },
        body: { specs: [task('t', 'true')] },
      });
    // A file size limit of 0 bytes (soft, so it can be lifted): every write of the process
    // to a file fails with EFBIG, as on a full disk, and SQLite reports SQLITE_IOERR.
    execFileSync('prlimit', ['--pid', String(pid), '--fsize=0:']);
    const refused = [];
    try {
      for (const attempt of [1, 2, 3]) refused.push(await outcome(create(`during-${stamp}-${attempt}`)));
      refused.push(await outcome(install));
      requests += 2;
      const { data: projects } = await running.admin.GET('/projects', { params: { query: { size: 100 } } });
      expect(projects?.elements.map((p) => p.name)).toEqual([`before-${stamp}`]);
      expect((await running.admin.GET('/status')).response.status).toBe(200);
    } finally {
      execFileSync('prlimit', ['--pid', String(pid), '--fsize=unlimited:']);
    }
    expect(refused).toEqual(Array(4).fill({ status: 503, code: 'service_unavailable' }));
    expect(await outcome(create(`after-${stamp}`))).toEqual({ status: 201 });
    expect(await outcome(install)).toEqual({ status: 204 });
    // The operator learns why from the log.
    expect(running.server.stderr()).toContain('SqliteError: disk I/O error');
    expect(await running.server.stop('SIGTERM')).toBe(0);

    const database = new Database(join(running.dataDir, 'pipewright.db'), { readonly: true });
    try {
      expect(database.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      database.close();
    }
    const again = await start([], running.dataDir, running.apiKey);
    try {
      const { data: projects } = await again.admin.GET('/projects', { params: { query: { size: 100 } } });
      expect(projects?.elements.map((p) => p.name).sort()).toEqual([`after-${stamp}`, `before-${stamp}`]);
      const { data: resources } = await again.client(before?.id).GET('/resources');
      expect(resources?.elements.map((r) => r.spec.name)).toEqual(['t']);
    } finally {
      await again.server.stop();
    }
    recordFigures('storage refusing writes', { requests, failures5xx: 0, writesLost: 0, refused503: 4 });
  });

  it('answers writes 503 while another process holds the write lock, and serves reads meanwhile', async () => {
    const running = await start();
    const stamp = Date.now();
    const other = new Database(join(running.dataDir, 'pipewright.db'));
    other.exec('BEGIN IMMEDIATE');
    try {
      const refused = await running.admin.POST('/projects', { body: { name: `locked-${stamp}` } }).then(
        () => 'accepted',
        (error: unknown) => (error instanceof ApiError ? `${error.status} ${error.code}` : String(error)),
      );
      expect(refused).toBe('503 service_unavailable');
      expect((await running.admin.GET('/projects')).response.status).toBe(200);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(
      (await running.admin.POST('/projects', { body: { name: `after-${stamp}` } })).response.status,
    ).toBe(201);
    expect(running.server.stderr()).toContain('database is locked');
    await running.server.stop();
  });
});

describe('a step that prints far more than the output limit', () => {
  it('keeps the limit, marks the cut, and the server stays up and small', async () => {
    const running = await start(); // the default limit: 1 MiB per step
    const pid = running.server.process.pid ?? 0;
    const printed = 256 * 1024 * 1024;
    const { client } = await projectWith(running, [
      task('flood', `head -c ${printed} /dev/zero | tr '\\0' x; echo; echo the end`),
      pipeline('flood', ['flood']),
      command('flood', ['flood']),
    ]);
    const rssBefore = rssMiB(pid);
    let rssPeak = rssBefore;
    let statusAnswers = 0;
    const [pipelineId = ''] = (await execute(client, await resourceId(client, 'command', 'flood')))
      .pipeline_ids;
    const ended = await eventually(async () => {
      rssPeak = Math.max(rssPeak, rssMiB(pid));
      if ((await running.admin.GET('/status')).response.status === 200) statusAnswers += 1;
      const { data } = await client.GET('/pipelines/id/{id}', { params: { path: { id: pipelineId } } });
      return data && FINAL.has(data.status) ? data : undefined;
    }, 60_000);
    expect(ended.status).toBe('successful');
    const [flood] = await tasksOf(client, pipelineId);
    const { data: steps } = await client.GET('/tasks/id/{id}/steps', {
      params: { path: { id: flood?.id ?? '' } },
    });
    const output = steps?.[0]?.output ?? '';
    expect(steps?.[0]?.output_truncated).toBe(true);
    expect(Buffer.byteLength(output)).toBe(1024 * 1024);
    expect(output).not.toContain('the end');
    expect(statusAnswers).toBeGreaterThan(0);
    // It never held the output: its memory grew by far less than what was printed.
    expect(rssPeak - rssBefore).toBeLessThan(printed / 2 / 1024 / 1024);
    await running.server.stop();
    recordFigures('output flood', {
      requests: statusAnswers,
      failures5xx: 0,
      printedMiB: printed / 1024 / 1024,
      keptMiB: Buffer.byteLength(output) / 1024 / 1024,
      rssGrowthMiB: Math.round(rssPeak - rssBefore),
    });
  });
});

/** Whether a process still runs (a zombie, dead but not yet reaped, does not). */
function isRunning(pid: number): boolean {
  if (!alive(pid)) return false;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

const asRoot = process.getuid?.() === 0;

describe('steps that leave children ignoring SIGTERM', () => {
  const childCount = asRoot ? 3 : 2;
  // Each step starts a child and a grandchild that ignore SIGTERM and sleep for minutes,
  // and records their pids; `main` is the step's own last command.
  const steps = (main: string) =>
    [
      'printf \'trap "" TERM\\necho $$ >> "$DIR/pids"\\nexec sleep 300\\n\' > ignore.sh',
      'sh ignore.sh &',
      "sh -c 'sh ignore.sh & wait' &",
      // A daemon's way out of the step's process group: only task users catch it.
      ...(asRoot ? ['setsid sh ignore.sh &'] : []),
      `i=0; while [ "$(cat "$DIR/pids" 2>/dev/null | wc -l)" -lt ${childCount} ] && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i+1)); done`,
      main,
    ].join('\n');

  async function runAndClean(main: string, end: (client: ApiClient, pipelineId: string) => Promise<void>) {
    const shared = tempDir('pipewright-children-');
    chmodSync(shared, 0o777); // task users write there
    const server = await start(['--abort-grace', '1']);
    try {
      const { client } = await projectWith(server, [
        task('leaves', steps(main), { DIR: shared }),
        pipeline('leaves', ['leaves']),
        command('leaves', ['leaves']),
      ]);
      const [pipelineId = ''] = (await execute(client, await resourceId(client, 'command', 'leaves')))
        .pipeline_ids;
      const pidsFile = join(shared, 'pids');
      const pids = await eventually(() => {
        const found = existsSync(pidsFile)
          ? readFileSync(pidsFile, 'utf8').trim().split('\n').map(Number)
          : [];
        return found.length >= childCount ? found : undefined;
      });
      await end(client, pipelineId);
      await eventually(() => (pids.some(isRunning) ? undefined : true));
      return (await settled(client, pipelineId)).status;
    } finally {
      await server.server.stop();
    }
  }

  it('kills them when the step ends by itself', async () => {
    const status = await runAndClean('echo leaving them behind', async () => undefined);
    expect(status).toBe('successful');
  });

  it('kills them, and the step ignoring SIGTERM too, when the task is aborted', async () => {
    const status = await runAndClean("trap '' TERM; sleep 300", async (client, id) => {
      await eventually(async () => {
        const { data } = await client.GET('/pipelines/id/{id}', { params: { path: { id } } });
        return data?.status === 'started' ? true : undefined;
      });
      await client.POST('/pipelines/id/{id}/abort', { params: { path: { id } } });
    });
    expect(status).toBe('aborted');
  });
});

describe.skipIf(!asRoot)('task users', () => {
  // `other` holds the line while `probe` looks around (as whom it runs, what it can read of
  // the data directory, and which tasks' environments it can read in /proc), until the abort.
  const specs = [
    task('other', 'id -u; sleep 300.25'),
    task(
      'probe',
      [
        'id -u',
        // -a: a command line's arguments are separated by NUL bytes, which grep takes for line ends
        // in a binary file; [.] keeps the pattern from matching the grep of another probe.
        "i=0; until grep -qsa 'sleep.300[.]25' /proc/[0-9]*/cmdline || [ $i -ge 1200 ]; do sleep 0.05; i=$((i+1)); done",
        '{ head -c 15 ../../../pipewright.db && echo; } 2>/dev/null || echo "database: denied"',
        'ls ../../.. >/dev/null 2>&1 || echo "data directory: not listable"',
        // Tasks of this project only: other tests' servers run tasks on this host meanwhile.
        `for f in /proc/[0-9]*/environ; do e=$( (tr '\\0' '\\n' < "$f") 2>/dev/null ) || continue; case "$e" in *"PIPEWRIGHT_PROJECT_ID=$PIPEWRIGHT_PROJECT_ID"*) printf '%s\\n' "$e" | grep '^PIPEWRIGHT_TASK_ID=' ;; esac; done | sort -u`,
      ].join('\n'),
    ),
    pipeline('look', ['other', 'probe']),
    command('look', ['look']),
  ];

  async function look(extra: string[]) {
    const running = await start(extra);
    try {
      const { client } = await projectWith(running, specs);
      const [pipelineId = ''] = (await execute(client, await resourceId(client, 'command', 'look')))
        .pipeline_ids;
      const probe = await eventually(async () => {
        const found = (await tasksOf(client, pipelineId)).find((t) => t.spec.name === 'probe');
        return found && FINAL.has(found.status) ? found : undefined;
      });
      await client.POST('/pipelines/id/{id}/abort', { params: { path: { id: pipelineId } } });
      const tasks = await tasksOf(client, pipelineId);
      const outputOf = async (name: string) => {
        const id = tasks.find((t) => t.spec.name === name)?.id ?? '';
        const { data } = await client.GET('/tasks/id/{id}/steps', { params: { path: { id } } });
        return (data?.[0]?.output ?? '').trim().split('\n');
      };
      await settled(client, pipelineId);
      return { probe, probeLines: await outputOf('probe'), otherLines: await outputOf('other'), tasks };
    } finally {
      await running.server.stop();
    }
  }

  it('runs each task as a user of its own, which reads neither the data directory nor other tasks', async () => {
    const { probe, probeLines, otherLines, tasks } = await look([]);
    expect(probe.status).toBe('successful');
    const [probeUid = '', ...rest] = probeLines;
    const otherUid = otherLines[0] ?? '';
    // Of one default range: the first million from 2000000000, or a later one when other servers
    // of this host (other tests) hold the first.
    const rangeOf = (uid: string) => Math.floor((Number(uid) - 2_000_000_000) / 1_000_000);
    expect(rangeOf(probeUid)).toBeGreaterThanOrEqual(0);
    expect(rangeOf(probeUid)).toBeLessThan(100);
    expect(rangeOf(otherUid)).toBe(rangeOf(probeUid));
    expect(probeUid).not.toBe(otherUid);
    expect(rest).toEqual([
      'database: denied',
      'data directory: not listable',
      `PIPEWRIGHT_TASK_ID=${probe.id}`,
    ]);
    expect(tasks).toHaveLength(2);
  });

  it('runs tasks when the data directory lies in a directory others may not enter', async () => {
    const privateParent = tempDir('pipewright-private-'); // 0700, as a home directory
    const running = await start([], join(privateParent, 'data'));
    try {
      const { client } = await projectWith(running, [
        task('hello', 'echo hello from "$(id -u)"'),
        pipeline('hello', ['hello']),
        command('hello', ['hello']),
      ]);
      const [pipelineId = ''] = (await execute(client, await resourceId(client, 'command', 'hello')))
        .pipeline_ids;
      expect((await settled(client, pipelineId)).status).toBe('successful');
    } finally {
      await running.server.stop();
    }
  });

  it("cannot redirect the server's writes of its scripts to a file of its choosing", async () => {
    // The server writes each `code` step to a file as root; step 1 tries to put a link where
    // step 2's script goes.
    const victim = join(tempDir('pipewright-victim-'), 'victim');
    writeFileSync(victim, 'root file\n');
    const running = await start();
    try {
      const plant = `ln -s ${victim} "$(dirname "$0")/step-2.sh" 2>/dev/null || echo "link: denied"`;
      const { client } = await projectWith(running, [
        {
          type: 'task',
          version: 1,
          name: 'plant',
          data: { steps: [{ code: plant }, { code: 'echo step 2' }] },
        },
        pipeline('plant', ['plant']),
        command('plant', ['plant']),
      ]);
      const [pipelineId = ''] = (await execute(client, await resourceId(client, 'command', 'plant')))
        .pipeline_ids;
      const { status } = await settled(client, pipelineId);
      const [planter] = await tasksOf(client, pipelineId);
      const { data: steps } = await client.GET('/tasks/id/{id}/steps', {
        params: { path: { id: planter?.id ?? '' } },
      });
      expect(readFileSync(victim, 'utf8')).toBe('root file\n');
      expect(statSync(victim).uid).toBe(0);
      expect(steps?.map((s) => s.output)).toEqual(['link: denied\n', 'step 2\n']);
      expect(status).toBe('successful');
    } finally {
      await running.server.stop();
    }
  });

  it("without them (--task-users off), a task reads the database and the other task's environment", async () => {
    const { probeLines, tasks } = await look(['--task-users', 'off']);
    expect(probeLines).toContain('SQLite format 3');
    const ids = tasks.map((t) => `PIPEWRIGHT_TASK_ID=${t.id}`).sort();
    expect(probeLines.filter((line) => line.startsWith('PIPEWRIGHT_TASK_ID=')).sort()).toEqual(ids);
  });
});

describe('slow clients', () => {
  it('cuts off a client that sends its headers too slowly, and serves the others', async () => {
    const running = await start(['--request-timeout', '1']);
    try {
      const port = Number(new URL(running.server.url).port);
      const socket = connectTls({
        host: '127.0.0.1',
        port,
        ca: readFileSync(certificateFile(running.dataDir)),
      });
      let answer = '';
      socket.on('data', (chunk) => {
        answer += chunk;
      });
      // The server may reset the connection as it cuts it off, with a byte of the drip unread:
      // the 408 has arrived by then, and the close follows.
      socket.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
      socket.write('GET /v0/status HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      // One byte every 200 ms: the headers would take about 25 seconds to arrive.
      const header = `Authorization: Bearer ${running.apiKey}\r\n\r\n`;
      let sent = 0;
      const drip = setInterval(() => {
        if (sent < header.length && !socket.destroyed) socket.write(header.charAt(sent++));
      }, 200);
      await closed;
      clearInterval(drip);
      expect(sent).toBeLessThan(header.length);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect((await running.admin.GET('/status')).response.status).toBe(200);
    } finally {
      await running.server.stop();
    }
  });

  it('cuts off a connection that never starts its TLS handshake', async () => {
    const running = await start(['--request-timeout', '1']);
    try {
      const socket = connectTcp({ host: '127.0.0.1', port: Number(new URL(running.server.url).port) });
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => socket.once('close', () => resolve()));
      expect((await running.admin.GET('/status')).response.status).toBe(200);
    } finally {
      await running.server.stop();
    }
  });
});

describe('the limits of the program', () => {
  it('applies --body-limit and --rate-limit', async () => {
    const running = await start(['--body-limit', '1000', '--rate-limit', '1']);
    try {
      const tooLarge = await running.admin
        .POST('/projects', { body: { name: 'a'.repeat(1000) } })
        .catch((error: unknown) => error);
      expect(tooLarge).toMatchObject({ status: 413, code: 'request_body_too_large' });
      // Bursts of 2 at 1 a second: six at once cannot all pass.
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => running.admin.GET('/status').catch((error: unknown) => error)),
      );
      const limited = answers.filter((a) => a instanceof ApiError);
      expect(limited.length).toBeGreaterThan(0);
      expect(limited[0]).toMatchObject({ status: 429, code: 'rate_limited' });
    } finally {
      await running.server.stop();
    }
  });
});

describe("the program's secrets", () => {
  it('keeps its key files private, speaks TLS 1.2 or later with an EC P-256 key, and never logs a key', async () => {
    const first = await start();
    const { dataDir, apiKey } = first;
    const mode = (path: string) => statSync(join(dataDir, path)).mode & 0o777;
    expect([
      mode('.'),
      mode('tls'),
      mode('tls/key.pem'),
      mode('admin-api-key'),
      mode('pipewright.db'),
    ]).toEqual([asRoot ? 0o711 : 0o700, 0o700, 0o600, 0o600, 0o600]); // 0711: task users enter
    const pem = readFileSync(certificateFile(dataDir));
    const { publicKey } = new X509Certificate(pem);
    expect([publicKey.asymmetricKeyType, publicKey.asymmetricKeyDetails?.namedCurve]).toEqual([
      'ec',
      'prime256v1',
    ]);
    const port = Number(new URL(first.server.url).port);
    const handshake = (maxVersion: SecureVersion) =>
      new Promise<string>((resolve) => {
        const socket = connectTls({ host: '127.0.0.1', port, ca: pem, maxVersion, minVersion: 'TLSv1' });
        socket.once('secureConnect', () => {
          resolve(String(socket.getProtocol()));
          socket.end();
        });
        // A reset after the handshake, as the server closes, changes nothing: the first answer stands.
        socket.on('error', () => resolve('refused'));
      });
    expect(await handshake('TLSv1.1')).toBe('refused');
    expect(await handshake('TLSv1.2')).toBe('TLSv1.2');

    // Requests with the key, a wrong one and a forged one (the right id, another secret).
    const forged = `${apiKey.slice(0, -4)}AAAA`;
    for (const key of [apiKey, 'pwk_wrong', forged]) {
      await clientOf(first.server, dataDir, key)
        .GET('/status')
        .catch(() => undefined);
    }
    await first.server.stop();
    const second = await start([], dataDir, apiKey);
    await second.admin.GET('/status');
    await second.server.stop();
    const secret = apiKey.slice(32);
    for (const log of [first.server.stderr(), second.server.stderr()]) {
      expect(log).toContain('"route":"/v0/status"');
      expect([log.includes(secret), log.includes('pwk_wrong'), log.includes(forged.slice(32))]).toEqual([
        false,
        false,
        false,
      ]);
    }
    // Shown once, on the first start only.
    expect(second.server.stdout()).not.toContain(apiKey);
  });
});
