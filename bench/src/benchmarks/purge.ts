import { Agent, request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Context, Row } from '../lib/context.js';
import { DATABASE_FILE, openReadOnly, type Pipewright, startPipewright } from '../lib/pipewright.js';
import { percentile } from '../lib/stats.js';

/** Requests per second sent to `GET /v0/status` while measuring, at a steady pace. */
const RATE = 200;
/** Rows a full run writes, then the server purges: 7 per expiring pipeline, 1 per step output and free event. */
const FULL = { expiringPipelines: 100_000, keptPipelines: 50_000, freeEvents: 250_000 };
const DAY_MS = 86_400_000;

/** Ids shaped like KSUIDs (27 base62 characters), increasing with `n`, their first character telling their kind. */
const idOf = (prefix: string, n: number) => `${prefix}${n.toString(36).padStart(26, '0')}`;

type Counts = typeof FULL;

/**
 * Writes expired rows straight into the database of a stopped server, in one transaction:
 * finished pipelines (ids `4...`) whose 7-day retention ended a year ago, each with a task, a
 * step execution, a chunk of output, a scratchpad entry, its event (`6...`) and command
 * execution (`7...`), 7 rows; finished pipelines without a retention (`2...`, events `3...`)
 * whose step output is past the server's 90 days (the chunk goes, the rest stays); events
 * (`5...`) of a year ago that no pipeline refers to any more. Returns the rows to delete.
 */
function writeExpiredRows(dataDir: string, projectId: string, orgId: string, counts: Counts): number {
  const db = new Database(join(dataDir, DATABASE_FILE));
  const event = db.prepare(
    `INSERT INTO events (id, org_id, project_id, command_id, creation_time, event_time, connector, name, data)
     VALUES (?, ?, ?, 'cmd', ?, ?, 'command', 'execution', '{"parameters":{}}')`,
  );
  const execution = db.prepare(
    `INSERT INTO command_executions (id, org_id, project_id, execution_time, command_id, parameters, event_id, pipeline_ids)
     VALUES (?, ?, ?, ?, 'cmd', '{}', ?, ?)`,
  );
  const pipeline = db.prepare(
    `INSERT INTO pipelines (id, org_id, project_id, name, event_id, event_time, concurrent, creation_time,
                            start_time, end_time, status, spec, environment)
     VALUES (?, ?, ?, 'bulk', ?, ?, 1, ?, ?, ?, 'successful', ?, '{}')`,
  );
  const task = db.prepare(
    `INSERT INTO tasks (id, org_id, project_id, pipeline_id, name, pipeline_task, spec, task_identities,
                        dependencies, instance_id, status, creation_time, start_time, end_time)
     VALUES (?, ?, ?, ?, 'noop', '{"task":"noop"}', ?, '[]', '[]', 1, 'successful', ?, ?, ?)`,
  );
  const step = db.prepare(
    `INSERT INTO step_executions (task_id, attempt, step_index, status, exit_code, start_time, end_time)
     VALUES (?, 0, 0, 'successful', 0, ?, ?)`,
  );
  const chunk = db.prepare(
    `INSERT INTO step_output_chunks (task_id, attempt, step_index, seq, text) VALUES (?, 0, 0, 0, ?)`,
  );
  const scratchpad = db.prepare(
    `INSERT INTO scratchpad_entries (pipeline_id, key, value) VALUES (?, 'state', ?)`,
  );
  const taskSpec = JSON.stringify({
    type: 'task',
    version: 1,
    name: 'noop',
    data: { steps: [{ command: 'true' }] },
  });
  const specWith = (extra: Record<string, unknown>) =>
    JSON.stringify({
      type: 'pipeline',
      version: 1,
      name: 'bulk',
      data: { ...extra, tasks: [{ task: 'noop' }] },
    });
  const output = `${'build output '.repeat(8)}\n`;
  const yearAgo = Date.now() - 365 * DAY_MS;
  const timeOf = (n: number) => new Date(yearAgo + n * 10).toISOString();
  const finishedPipeline = (kind: 'expiring' | 'kept', n: number) => {
    const [pipelineId, eventId, taskId] =
      kind === 'expiring'
        ? [idOf('4', n), idOf('6', n), idOf('8', n)]
        : [idOf('2', n), idOf('3', n), idOf('1', n)];
    const time = timeOf(n);
    event.run(eventId, orgId, projectId, time, time);
    pipeline.run(
      pipelineId,
      orgId,
      projectId,
      eventId,
      time,
      time,
      time,
      time,
      specWith(kind === 'expiring' ? { retention: 7 } : {}),
    );
    task.run(taskId, orgId, projectId, pipelineId, taskSpec, time, time, time);
    step.run(taskId, time, time);
    chunk.run(taskId, output);
    if (kind === 'expiring') {
      execution.run(idOf('7', n), orgId, projectId, time, eventId, JSON.stringify([pipelineId]));
      scratchpad.run(pipelineId, `step ${n}`);
    }
  };
  db.transaction(() => {
    for (let n = 0; n < counts.expiringPipelines; n += 1) finishedPipeline('expiring', n);
    for (let n = 0; n < counts.keptPipelines; n += 1) finishedPipeline('kept', n);
    for (let n = 0; n < counts.freeEvents; n += 1) {
      event.run(idOf('5', n), orgId, projectId, timeOf(n), timeOf(n));
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return 7 * counts.expiringPipelines + counts.keptPipelines + counts.freeEvents;
}

/** Whether the server has deleted every expired row `writeExpiredRows` wrote (cheap lookups by id, through indexes). */
function purgedCheck(dataDir: string): { done(): boolean; close(): void } {
  const db = openReadOnly(dataDir);
  const left = db.prepare<[], { left: number }>(
    `SELECT EXISTS (SELECT 1 FROM pipelines WHERE id >= '4' AND id < '5')
         OR EXISTS (SELECT 1 FROM events WHERE id >= '5' AND id < '7')
         OR EXISTS (SELECT 1 FROM command_executions WHERE id >= '7' AND id < '8')
         OR EXISTS (SELECT 1 FROM step_output_chunks) AS left`,
  );
  return { done: () => left.get()?.left === 0, close: () => db.close() };
}

/**
 * Latencies (ms) of `GET /v0/status` sent at `RATE` a second, each from its send to the end of
 * its response, for `window.ms`, or until `window.until()` holds (checked every 100 ms) but at
 * most `window.ms`. The pace does not wait for answers: a request held up by the server does
 * not delay the next ones.
 */
async function statusLatencies(
  server: Pipewright,
  window: { ms: number; until?: () => boolean },
): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const url = `${server.baseUrl}/v0/status`;
  const headers = { authorization: `Bearer ${server.apiKey}` };
  const latencies: number[] = [];
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const sent = performance.now();
      request(url, { agent, headers }, (response) => {
        if (response.statusCode !== 200) reject(new Error(`GET /v0/status answered ${response.statusCode}`));
        response.resume();
        response.once('end', () => {
          latencies.push(performance.now() - sent);
          resolve();
        });
      })
        .once('error', reject)
        .end();
    });
  let stopped = false;
  const checker = setInterval(() => {
    stopped ||= window.until?.() ?? false;
  }, 100);
  const sent: Promise<void>[] = [];
  const start = performance.now();
  try {
    for (let i = 0; !stopped; i += 1) {
      if (performance.now() - start > window.ms) {
        if (window.until) throw new Error('benchmark did not finish in time');
        break;
      }
      const wait = start + (i * 1000) / RATE - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      sent.push(one());
    }
    await Promise.all(sent);
  } finally {
    clearInterval(checker);
    await Promise.allSettled(sent);
    agent.destroy();
  }
  return latencies;
}

/** A fresh server's first requests are slow (code not yet compiled, connections opened): not measured. */
async function warmedUp(server: Pipewright): Promise<void> {
  await statusLatencies(server, { ms: 500 });
}

/**
 * 8. `GET /v0/status` latency while the server purges 1,000,000 expired rows, against the same
 * server before the rows are written and after they are purged.
 */
export async function purge(context: Context): Promise<Row[]> {
  const counts: Counts = context.quick
    ? { expiringPipelines: 10_000, keptPipelines: 5_000, freeEvents: 25_000 }
    : FULL;
  const windowMs = context.quick ? 2000 : 5000;
  const dataDir = context.dir('purge');
  const first = await startPipewright(dataDir);
  const { data: project } = await first.client().POST('/projects', { body: { name: 'purge' } });
  context.log(`status latency for ${windowMs / 1000} s, nothing to purge`);
  const before = await warmedUp(first)
    .then(() => statusLatencies(first, { ms: windowMs }))
    .catch(async (error) => {
      await first.stop();
      throw error;
    });
  await first.stop();
  context.log('writing expired rows');
  const rows = writeExpiredRows(dataDir, project?.id ?? '', project?.org_id ?? '', counts);
  const server = await startPipewright(dataDir);
  const check = purgedCheck(dataDir);
  try {
    // The first pass begins as the server starts listening, and goes on while it warms up.
    const began = performance.now();
    await warmedUp(server);
    context.log(`status latency while ${rows.toLocaleString('en')} rows are purged`);
    const during = await statusLatencies(server, { ms: 300_000, until: check.done });
    const purgeSeconds = (performance.now() - began) / 1000;
    context.log(`status latency for ${windowMs / 1000} s, purged`);
    const after = await statusLatencies(server, { ms: windowMs });
    const baseline = [...before, ...after];
    context.log(
      `p99 before ${percentile(before, 99).toFixed(2)} ms, during ${percentile(during, 99).toFixed(2)} ms, after ${percentile(after, 99).toFixed(2)} ms; the purge took ${purgeSeconds.toFixed(1)} s`,
    );
    const p99 = percentile(during, 99);
    const baseP99 = percentile(baseline, 99);
    const p50 = percentile(during, 50);
    const baseP50 = percentile(baseline, 50);
    const name = 'no purge: before the rows and after';
    return [
      {
        benchmark: 'purge',
        metric: `GET /v0/status p99 at ${RATE}/s during the purge of ${rows.toLocaleString('en')} rows`,
        ours: p99,
        baseline: baseP99,
        baselineName: name,
        ratio: p99 / baseP99,
        unit: 'ms',
        goal: 'ratio <= 2',
        met: p99 / baseP99 <= 2,
      },
      {
        benchmark: 'purge',
        metric: 'GET /v0/status p50 during the purge',
        ours: p50,
        baseline: baseP50,
        baselineName: name,
        ratio: p50 / baseP50,
        unit: 'ms',
      },
      {
        benchmark: 'purge',
        metric: 'rows purged per second, requests served meanwhile',
        ours: rows / purgeSeconds,
        unit: 'rows/s',
      },
    ];
  } finally {
    check.close();
    await server.stop();
  }
}
