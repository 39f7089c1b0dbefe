import { Agent, request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { idOf, TRIM_CHANGE_LOG, writePostgres } from '../lib/bulk.js';
import type { Context, Row } from '../lib/context.js';
import { one, viewOf } from '../lib/database.js';
import { DATABASE_FILE, type Pipewright, startPipewright } from '../lib/pipewright.js';
import { percentile } from '../lib/stats.js';

/** Requests per second sent to `GET /v0/status` while measuring, at a steady pace. */
const RATE = 200;
/** Rows a full run writes, then the server purges: 7 per expiring pipeline, 1 per step output and free event. */
const FULL = { expiringPipelines: 100_000, keptPipelines: 50_000, freeEvents: 250_000 };
const DAY_MS = 86_400_000;
/**
 * How long the purge is watched at most; one not over by then is measured over this window, with
 * the rows purged meanwhile. PostgreSQL's is: its batches, of a few round trips each, come down
 * to one pipeline or event, and a full run's rows would take it over an hour.
 */
const PURGE_WINDOW_MS = 300_000;

type Counts = typeof FULL;

/** The rows the server is to delete of those `writeExpiredRows` writes. */
const expiredRows = (counts: Counts) =>
  7 * counts.expiringPipelines + counts.keptPipelines + counts.freeEvents;

// Values of the rows, the same on both databases.
const TASK_SPEC = JSON.stringify({
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
/** Of each kind of finished pipeline: the first characters of the ids of it, its event and its task; its spec. */
const FINISHED = {
  expiring: { prefixes: ['4', '6', '8'], spec: specWith({ retention: 7 }) },
  kept: { prefixes: ['2', '3', '1'], spec: specWith({}) },
} as const;
const OUTPUT = `${'build output '.repeat(8)}\n`;
/** The time of row 0, a year ago; row `n` is `n` x 10 ms later. */
const yearAgoMs = () => Date.now() - 365 * DAY_MS;

/**
 * Writes expired rows straight into the database of a stopped server, in one transaction:
 * finished pipelines (ids `4...`) whose 7-day retention ended a year ago, each with a task, a
 * step execution, a chunk of output, a scratchpad entry, its event (`6...`) and command
 * execution (`7...`), 7 rows; finished pipelines without a retention (`2...`, events `3...`)
 * whose step output is past the server's 90 days (the chunk goes, the rest stays); events
 * (`5...`) of a year ago that no pipeline refers to any more. This is SQLite's file; PostgreSQL's
 * database gets the same rows from writeExpiredPostgresRows.
 */
function writeExpiredRows(dataDir: string, projectId: string, orgId: string, counts: Counts): void {
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
  const yearAgo = yearAgoMs();
  const timeOf = (n: number) => new Date(yearAgo + n * 10).toISOString();
  const finishedPipeline = (kind: 'expiring' | 'kept', n: number) => {
    const [pipelineId, eventId, taskId] = FINISHED[kind].prefixes.map((prefix) => idOf(prefix, n));
    const time = timeOf(n);
    event.run(eventId, orgId, projectId, time, time);
    pipeline.run(pipelineId, orgId, projectId, eventId, time, time, time, time, FINISHED[kind].spec);
    task.run(taskId, orgId, projectId, pipelineId, TASK_SPEC, time, time, time);
    step.run(taskId, time, time);
    chunk.run(taskId, OUTPUT);
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
    db.exec(TRIM_CHANGE_LOG);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/**
 * The rows of writeExpiredRows, into the PostgreSQL database at `url` of a stopped server: each
 * kind of row in one statement over the numbers of the rows.
 */
async function writeExpiredPostgresRows(
  url: string,
  projectId: string,
  orgId: string,
  counts: Counts,
): Promise<void> {
  const yearAgo = yearAgoMs();
  await writePostgres(url, async (client) => {
    // Rows 0 to `count` - 1 of `select`, which reads `n`, its time `t` (timeOf of
    // writeExpiredRows) and `params` from $3 on.
    const insert = (into: string, select: string, count: number, params: unknown[]) =>
      client.query(
        `INSERT INTO ${into}
         SELECT ${select} FROM generate_series(0, $1::bigint - 1) AS n, pg_temp.iso_time($2 + n * 10) AS t`,
        [count, yearAgo, ...params],
      );
    const events = (prefix: string, count: number) =>
      insert(
        'events (id, org_id, project_id, command_id, creation_time, event_time, connector, name, data)',
        `pg_temp.id_of($3, n), $4, $5, 'cmd', t, t, 'command', 'execution', '{"parameters":{}}'`,
        count,
        [prefix, orgId, projectId],
      );
    const finishedPipelines = async (kind: keyof typeof FINISHED, count: number) => {
      const { prefixes, spec } = FINISHED[kind];
      const [pipeline, event, task] = prefixes;
      await events(event, count);
      await insert(
        `pipelines (id, org_id, project_id, name, event_id, event_time, concurrent, creation_time, start_time,
                    end_time, status, spec, environment)`,
        `pg_temp.id_of($3, n), $4, $5, 'bulk', pg_temp.id_of($6, n), t, 1, t, t, t, 'successful', $7, '{}'`,
        count,
        [pipeline, orgId, projectId, event, spec],
      );
      await insert(
        `tasks (id, org_id, project_id, pipeline_id, name, pipeline_task, spec, task_identities, dependencies,
                instance_id, status, creation_time, start_time, end_time)`,
        `pg_temp.id_of($3, n), $4, $5, pg_temp.id_of($6, n), 'noop', '{"task":"noop"}', $7, '[]', '[]', 1,
         'successful', t, t, t`,
        count,
        [task, orgId, projectId, pipeline, TASK_SPEC],
      );
      await insert(
        'step_executions (task_id, attempt, step_index, status, exit_code, start_time, end_time)',
        `pg_temp.id_of($3, n), 0, 0, 'successful', 0, t, t`,
        count,
        [task],
      );
      await insert(
        'step_output_chunks (task_id, attempt, step_index, seq, text)',
        'pg_temp.id_of($3, n), 0, 0, 0, $4',
        count,
        [task, OUTPUT],
      );
    };
    await finishedPipelines('expiring', counts.expiringPipelines);
    await insert(
      'command_executions (id, org_id, project_id, execution_time, command_id, parameters, event_id, pipeline_ids)',
      `pg_temp.id_of('7', n), $3, $4, t, 'cmd', '{}', pg_temp.id_of('6', n), '["' || pg_temp.id_of('4', n) || '"]'`,
      counts.expiringPipelines,
      [orgId, projectId],
    );
    await insert(
      'scratchpad_entries (pipeline_id, key, value)',
      `pg_temp.id_of('4', n), 'state', 'step ' || n`,
      counts.expiringPipelines,
      [],
    );
    await finishedPipelines('kept', counts.keptPipelines);
    await events('5', counts.freeEvents);
  });
}

/** What is left of the expired rows `writeExpiredRows` wrote. */
interface PurgeCheck {
  /** Whether the server has deleted them all: a row while any is left (cheap lookups by id, through indexes). */
  done(): Promise<boolean>;
  /** How many are left, counted (a scan of what is left: once, at the end). */
  left(): Promise<number>;
  close(): Promise<void>;
}

function purgedCheck(server: Pipewright): PurgeCheck {
  const db = viewOf(server);
  return {
    done: async () =>
      (await one(
        db,
        `SELECT 1 AS expired
          WHERE EXISTS (SELECT 1 FROM pipelines WHERE id >= '4' AND id < '5')
             OR EXISTS (SELECT 1 FROM events WHERE id >= '5' AND id < '7')
             OR EXISTS (SELECT 1 FROM command_executions WHERE id >= '7' AND id < '8')
             OR EXISTS (SELECT 1 FROM step_output_chunks)`,
      )) === undefined,
    left: async () =>
      Number(
        (
          await one<{ n: number }>(
            db,
            `SELECT (SELECT count(*) FROM pipelines WHERE id >= '4' AND id < '5')
                  + (SELECT count(*) FROM tasks WHERE id >= '8' AND id < '9')
                  + (SELECT count(*) FROM step_executions WHERE task_id >= '8' AND task_id < '9')
                  + (SELECT count(*) FROM step_output_chunks)
                  + (SELECT count(*) FROM scratchpad_entries)
                  + (SELECT count(*) FROM events WHERE id >= '5' AND id < '7')
                  + (SELECT count(*) FROM command_executions WHERE id >= '7' AND id < '8') AS n`,
          )
        )?.n,
      ),
    close: () => db.close(),
  };
}

/**
 * Latencies (ms) of `GET /v0/status` sent at `RATE` a second, each from its send to the end of
 * its response, for `window.ms`, or until `window.until()` holds (checked every 100 ms) if
 * sooner. The pace does not wait for answers: a request held up by the server does
 * not delay the next ones.
 */
async function statusLatencies(
  server: Pipewright,
  window: { ms: number; until?: () => Promise<boolean> },
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
  // One look at a time: one at PostgreSQL is a round trip, which a busy database may hold up.
  let looking = false;
  const checker = setInterval(() => {
    if (!window.until || looking) return;
    looking = true;
    void window.until().then((done) => {
      stopped ||= done;
      looking = false;
    });
  }, 100);
  const sent: Promise<void>[] = [];
  const start = performance.now();
  try {
    for (let i = 0; !stopped; i += 1) {
      if (performance.now() - start > window.ms) break;
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
 * server before the rows are written and after they are purged (when they were within
 * PURGE_WINDOW_MS; else before only).
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
  const [projectId, orgId] = [project?.id ?? '', project?.org_id ?? ''];
  if (first.database === undefined) writeExpiredRows(dataDir, projectId, orgId, counts);
  else await writeExpiredPostgresRows(first.database, projectId, orgId, counts);
  const rows = expiredRows(counts);
  const server = await startPipewright(dataDir);
  const check = purgedCheck(server);
  try {
    // The first pass begins as the server starts listening, and goes on while it warms up.
    const began = performance.now();
    await warmedUp(server);
    context.log(`status latency while ${rows.toLocaleString('en')} rows are purged`);
    const during = await statusLatencies(server, { ms: PURGE_WINDOW_MS, until: check.done });
    const purgeSeconds = (performance.now() - began) / 1000;
    const purged = rows - (await check.left());
    const over = purged === rows;
    context.log(
      over
        ? `the purge took ${purgeSeconds.toFixed(1)} s; status latency for ${windowMs / 1000} s, purged`
        : `the purge was not over after ${purgeSeconds.toFixed(1)} s: ${purged.toLocaleString('en')} rows purged; no window after it`,
    );
    const after = over ? await statusLatencies(server, { ms: windowMs }) : [];
    const baseline = [...before, ...after];
    context.log(
      `p99 before ${percentile(before, 99).toFixed(2)} ms, during ${percentile(during, 99).toFixed(2)} ms${over ? `, after ${percentile(after, 99).toFixed(2)} ms` : ''}`,
    );
    const p99 = percentile(during, 99);
    const baseP99 = percentile(baseline, 99);
    const p50 = percentile(during, 50);
    const baseP50 = percentile(baseline, 50);
    const name = over ? 'no purge: before the rows and after' : 'no purge: before the rows';
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
        metric: `rows purged per second, requests served meanwhile${over ? '' : ` (${purged.toLocaleString('en')} in the ${Math.round(purgeSeconds)} s watched)`}`,
        ours: purged / purgeSeconds,
        unit: 'rows/s',
      },
    ];
  } finally {
    await check.close();
    await server.stop();
  }
}
