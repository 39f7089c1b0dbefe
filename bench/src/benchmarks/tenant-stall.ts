import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import type { Context, Row } from '../lib/context.js';
import { one, writerOf } from '../lib/database.js';
import { executeAndWait } from '../lib/execute.js';
import {
  databaseArgs,
  installProject,
  type Pipewright,
  resourceId,
  SERVER_BIN,
  startPipewright,
  trivialTask,
  until,
} from '../lib/pipewright.js';
import { alternate, median, percentile } from '../lib/stats.js';
import { openStreams, streamKeys } from './streams-readers.js';
import type { FromProbe, ProbeSetup, ToProbe } from './tenant-stall-probe.js';

const run = promisify(execFile);

/**
 * How long one organization's requests wait while another's project does the heaviest things
 * any key may ask for: the probe, `GET /v0/org` of another organization every few ms, sees the
 * server's event loop delay. Baseline: the same probe on the idle server.
 */
interface Probe {
  stop(): Promise<number[]>;
}

/** The probe, on a thread of its own (tenant-stall-probe.ts), started once it sends its first request. */
async function startProbe(client: ProbeSetup): Promise<Probe> {
  const worker = new Worker(new URL('./tenant-stall-probe.js', import.meta.url), { workerData: client });
  const next = (type: FromProbe['type']) =>
    new Promise<FromProbe>((resolve, reject) => {
      const onMessage = (message: FromProbe) => {
        if (message.type !== type && message.type !== 'failed') return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        if (message.type === 'failed') reject(new Error(message.message));
        else resolve(message);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  await next('started');
  return {
    stop: async () => {
      const done = next('samples');
      worker.postMessage('stop' satisfies ToProbe);
      const message = await done.finally(() => worker.terminate());
      return message.type === 'samples' ? message.samples : [];
    },
  };
}

/**
 * While each of `rounds` runs, one after the other, the probe's p99 and max over all its
 * samples, each against the idle server's. A short job gives the probe few samples (an install
 * of 10,000 specs, about 80, whose p99 is their max): such a job is measured over a few rounds.
 */
async function probed(
  context: Context,
  probeClient: ProbeSetup,
  idle: number[],
  name: string,
  ...rounds: (() => Promise<void>)[]
) {
  const samples: number[] = [];
  for (const work of rounds) {
    const probe = await startProbe(probeClient);
    try {
      await work();
    } finally {
      samples.push(...(await probe.stop()));
    }
  }
  context.log(`${name}: ${samples.length} probe samples`);
  return (
    [
      ['p99', 99, 50],
      ['max', 100, 200],
    ] as const
  ).map(([label, p, goal]): Row => {
    const [during, before] = [percentile(samples, p), percentile(idle, p)];
    return {
      benchmark: 'stall',
      metric: `another organization's GET /v0/org during ${name}, ${label}`,
      ours: during,
      baseline: before,
      baselineName: 'idle server',
      ratio: during / before,
      unit: 'ms',
      goal: `< ${goal} ms`,
      met: during < goal,
    };
  });
}

/** A project with one pipeline `p` of `entries` and a command `go` starting it; returns it, a client and the command. */
async function pipelineProject(server: Pipewright, name: string, entries: unknown[]) {
  const projectId = await installProject(server, name, [
    trivialTask,
    { type: 'pipeline', version: 1, name: 'p', data: { concurrent: true, tasks: entries } },
    { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['p'] } },
  ]);
  const client = server.client(projectId);
  return { projectId, client, commandId: await resourceId(client, 'command', 'go') };
}

const chain = (length: number) =>
  Array.from({ length }, (_, i) => ({
    name: `e${i}`,
    task: 'noop',
    ...(i > 0 ? { dependencies: [`e${i - 1}`] } : {}),
  }));

// Patterns the RE2 syntax accepts that a backtracking engine takes exponential time on, and
// values of the longest length a filter reads.
const NASTY_PATTERNS = ['^(a+)+$', '^(a|a)*$', '^(a|aa)+$', '(.*a){12}$', '^(([a-z])+.)+[A-Z]([a-z])+$'];

export async function tenantStall(context: Context): Promise<Row[]> {
  const size = context.quick ? 1000 : 10_000;
  const ours = await startPipewright(context.dir('stall'));
  const rows: Row[] = [];
  try {
    // The probe's organization, made by the admin command beside the running server.
    const { stdout } = await run(process.execPath, [
      SERVER_BIN,
      'create-organization',
      'probe',
      '--admin-email',
      'probe@bench.example',
      ...databaseArgs(ours),
    ]);
    const probeKey = stdout.trim().split('\n').at(-1) ?? '';
    const probeClient = { baseUrl: ours.baseUrl, apiKey: probeKey };
    const idleProbe = await startProbe(probeClient);
    await new Promise((resolve) => setTimeout(resolve, context.quick ? 1000 : 3000));
    const idle = await idleProbe.stop();

    // (d) An install of `size` specs.
    const specs = Array.from({ length: size }, (_, i) => ({
      type: 'task',
      version: 1,
      name: `t${i}`,
      data: { steps: [{ command: 'true' }] },
    }));
    // Projects made and the body serialized before the probe starts: the probe times the
    // server's work, and serializing on this machine's other core would slow the probe's thread.
    const body = JSON.stringify({ specs });
    const installs = await Promise.all(
      Array.from({ length: context.quick ? 1 : 3 }, (_, i) => installProject(ours, `install-${i}`, [])),
    );
    rows.push(
      ...(await probed(
        context,
        probeClient,
        idle,
        `an install of ${size} specs`,
        ...installs.map((projectId) => async () => {
          const { response } = await ours.client().PUT('/projects/id/{id}/resources', {
            params: { path: { id: projectId } },
            body: { specs: [] },
            bodySerializer: () => body,
          });
          if (response.status !== 204) throw new Error(`install answered ${response.status}`);
        }),
      )),
    );

    // (a) A chain of `size` entries, and its scheduling cost per task against a chain of 10.
    const long = await pipelineProject(ours, 'chain', chain(size));
    let longMs = 0;
    rows.push(
      ...(await probed(context, probeClient, idle, `a chain of ${size} tasks`, async () => {
        longMs = await executeAndWait(ours, long.client, long.commandId);
      })),
    );
    const short = await pipelineProject(ours, 'short-chain', chain(10));
    const shortMs = median(
      (await alternate(5, { short: () => executeAndWait(ours, short.client, short.commandId) })).short,
    );
    const perTask = longMs / size;
    rows.push({
      benchmark: 'stall',
      metric: `a chain of ${size} tasks: time per task vs a chain of 10`,
      ours: perTask,
      baseline: shortMs / 10,
      baselineName: 'chain of 10',
      ratio: perTask / (shortMs / 10),
      unit: 'ms',
      goal: 'ratio <= 1.5',
      met: perTask / (shortMs / 10) <= 1.5,
    });

    // (b) A pipeline of `size` independent tasks.
    const wide = await pipelineProject(
      ours,
      'wide',
      Array.from({ length: size }, (_, i) => ({ name: `e${i}`, task: 'noop' })),
    );
    rows.push(
      ...(await probed(context, probeClient, idle, `a pipeline of ${size} independent tasks`, async () => {
        await executeAndWait(ours, wide.client, wide.commandId);
      })),
    );

    // (c) Events against the nastiest legal filters, each value of the longest length read.
    const count = context.quick ? 50 : 200;
    const filtersProject = await installProject(ours, 'filters', [
      trivialTask,
      { type: 'pipeline', version: 1, name: 'never', data: { concurrent: true, tasks: [{ task: 'noop' }] } },
      ...NASTY_PATTERNS.map((pattern, i) => ({
        type: 'trigger',
        version: 1,
        name: `nasty-${i}`,
        data: {
          connector: 'custom',
          event: 'nasty',
          pipelines: ['never'],
          filters: [{ path: '/s', matches: pattern }],
        },
      })),
    ]);
    const value = `${'a'.repeat(FILTER_VALUE_LIMIT - 1)}!`;
    const events = ours.client(filtersProject);
    const sendEvents = async () => {
      let sent = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (sent < count) {
            sent += 1;
            const { response } = await events.POST('/events', {
              body: { connector: 'custom', name: 'nasty', data: { s: value } },
            });
            if (!response.ok) throw new Error(`event answered ${response.status}`);
          }
        }),
      );
    };
    // 200 events give the probe about 90 samples, so they are sent in 3 rounds, as the install.
    rows.push(
      ...(await probed(
        context,
        probeClient,
        idle,
        `${count} events against ${NASTY_PATTERNS.length} nasty filters`,
        ...Array.from({ length: context.quick ? 1 : 3 }, () => sendEvents),
      )),
    );

    // (e) and (f): thousands of streams of one project's changes, hundreds of one task's output.
    const probe = { client: probeClient, idle, keys: await streamKeys(ours, streamCount(context)) };
    rows.push(...(await watchedProject(context, ours, probe)));
    rows.push(...(await followedTask(context, ours, probe)));

    // Restart after a crash with `size` pipelines queued behind one running.
    const queue = await installProject(ours, 'queue', [
      { type: 'task', version: 1, name: 'hang', data: { steps: [{ command: 'sleep', arguments: ['600'] }] } },
      { type: 'pipeline', version: 1, name: 'solo', data: { tasks: [{ task: 'hang' }] } },
      { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['solo'] } },
    ]);
    const queueClient = ours.client(queue);
    const go = await resourceId(queueClient, 'command', 'go');
    for (let done = 0; done < size; done += 50) {
      await Promise.all(
        Array.from({ length: 50 }, () =>
          queueClient.POST('/commands/id/{id}/execute', { params: { path: { id: go } }, body: {} }),
        ),
      );
    }
    rows.push(await restartTime(context, ours, size));
  } finally {
    await ours.stop();
  }
  return rows;
}

/** How many streams cases (e) and (f) open, spread over keys (the server's cap is 100 a key). */
const streamCount = (context: Context) => (context.quick ? 500 : 2000);

/** The probe's client and its samples on the idle server, and keys for the streams of (e) and (f). */
interface StreamProbe {
  client: ProbeSetup;
  idle: number[];
  keys: string[];
}

/**
 * The probe during `work`, while `count` streams of `path` are open (read by the benchmark's
 * reader threads, which count the messages).
 */
async function probedWithStreams(
  context: Context,
  server: Pipewright,
  probe: StreamProbe,
  stream: { path: string; event: string; count: number },
  name: string,
  work: () => Promise<void>,
) {
  const { path, event, count } = stream;
  const readers = await openStreams(server.baseUrl, probe.keys, path, count, event, false);
  try {
    return await probed(context, probe.client, probe.idle, name, work);
  } finally {
    await readers.close();
  }
}

/**
 * (e) One project with thousands of streams open while one of its pipelines changes status 20
 * times a second, each change committed by another connection, as the scheduler's would be, and
 * sent to every stream.
 */
async function watchedProject(context: Context, server: Pipewright, probe: StreamProbe) {
  const count = streamCount(context);
  const { projectId, client, commandId } = await pipelineProject(server, 'watched', [{ task: 'noop' }]);
  const { data } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: commandId } },
    body: {},
  });
  const pipelineId = data?.pipeline_ids[0] as string;
  const db = writerOf(server);
  try {
    const unfinished = `SELECT count(*) AS n FROM pipelines WHERE status IN ('created', 'started')`;
    await until(async () => Number((await one<{ n: number }>(db, unfinished))?.n) === 0, 120_000);
    return await probedWithStreams(
      context,
      server,
      probe,
      { path: `/v0/changes?project_id=${projectId}`, event: 'pipeline', count },
      `${count} streams of a project changing 20 times a second`,
      async () => {
        for (let n = 0; n < (context.quick ? 2 : 5) * 20; n += 1) {
          await db.run(
            `UPDATE pipelines SET status = CASE status WHEN 'successful' THEN 'failed' ELSE 'successful' END WHERE id = ?`,
            pipelineId,
          );
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
    );
  } finally {
    await db.close();
  }
}

/** (f) Streams of one task's output while its step prints a line every 10 ms. */
async function followedTask(context: Context, server: Pipewright, probe: StreamProbe) {
  const count = streamCount(context) / 4;
  const projectId = await installProject(server, 'followed', [
    {
      type: 'task',
      version: 1,
      name: 'talk',
      // A minute at most, should the benchmark fail before it aborts the pipeline.
      data: {
        steps: [{ code: 'i=0; while [ $i -lt 6000 ]; do echo "line $i"; i=$((i+1)); sleep 0.01; done' }],
      },
    },
    { type: 'pipeline', version: 1, name: 'talk', data: { tasks: [{ task: 'talk' }] } },
    { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['talk'] } },
  ]);
  const client = server.client(projectId);
  const { data } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: await resourceId(client, 'command', 'go') } },
    body: {},
  });
  const pipelineId = data?.pipeline_ids[0] as string;
  let taskId: string | undefined;
  await until(async () => {
    const { data: tasks } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId } } });
    taskId = tasks?.elements.find((task) => task.status === 'started')?.id;
    return taskId !== undefined;
  }, 60_000);
  try {
    return await probedWithStreams(
      context,
      server,
      probe,
      { path: `/v0/tasks/id/${taskId}/output?project_id=${projectId}`, event: 'output', count },
      `${count} streams of the output of a task printing a line every 10 ms`,
      () => new Promise((resolve) => setTimeout(resolve, (context.quick ? 2 : 5) * 1000)),
    );
  } finally {
    await client.POST('/pipelines/id/{id}/abort', { params: { path: { id: pipelineId } } });
  }
}

/** The longest string value a `matches` filter reads (the spec's bound, TriggerFilter.yaml). */
const FILTER_VALUE_LIMIT = 100_000;

/** From a SIGKILL to listening again, with `queued` pipelines waiting; against an idle data dir's start. */
async function restartTime(context: Context, server: Pipewright, queued: number): Promise<Row> {
  server.child.kill('SIGKILL');
  await new Promise((resolve) => server.child.once('exit', resolve));
  const emptyDir = context.dir('stall-empty');
  await (await startPipewright(emptyDir)).stop();
  const samples = await alternate(3, {
    ours: async () => {
      const started = performance.now();
      const again = await startPipewright(server.dataDir);
      const ms = performance.now() - started;
      again.child.kill('SIGKILL');
      await new Promise((resolve) => again.child.once('exit', resolve));
      return ms;
    },
    empty: async () => {
      const started = performance.now();
      const again = await startPipewright(emptyDir);
      const ms = performance.now() - started;
      await again.stop();
      return ms;
    },
  });
  const [ours, empty] = [median(samples.ours), median(samples.empty)];
  return {
    benchmark: 'stall',
    metric: `restart after SIGKILL to listening, ${queued} pipelines queued`,
    ours,
    baseline: empty,
    baselineName: 'start on an empty data dir',
    ratio: ours / empty,
    unit: 'ms',
    goal: '< 1000 ms',
    met: ours < 1000,
  };
}
