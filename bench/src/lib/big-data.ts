import { join } from 'node:path';
import Database from 'better-sqlite3';
import { idOf, TRIM_CHANGE_LOG, writePostgres } from './bulk.js';
import type { Context } from './context.js';
import { DATABASE_FILE, type Pipewright, startPipewright } from './pipewright.js';

export const EVENT_COUNT = 1_000_000;
export const PIPELINE_COUNT = 10_000;

export interface BigData {
  server: Pipewright;
  projectId: string;
}

/** The time of the first event and pipeline; each next one is a second later. */
const START_MS = Date.parse('2026-01-01T00:00:00.000Z');

/** The rows into the stopped server's SQLite file, in one transaction. */
function writeSqlite(
  dataDir: string,
  orgId: string,
  projectId: string,
  events: number,
  pipelines: number,
): void {
  const db = new Database(join(dataDir, DATABASE_FILE));
  const insertEvent = db.prepare(
    `INSERT INTO events (id, org_id, project_id, creation_time, event_time, connector, name, data)
     VALUES (?, ?, ?, ?, ?, 'custom', ?, ?)`,
  );
  const insertPipeline = db.prepare(
    `INSERT INTO pipelines (id, org_id, project_id, name, event_id, event_time, concurrent, creation_time,
                            start_time, end_time, status, spec, environment)
     VALUES (?, ?, ?, 'bulk', ?, ?, 0, ?, ?, ?, 'successful', '{}', '{}')`,
  );
  db.transaction(() => {
    for (let n = 0; n < events; n += 1) {
      const time = new Date(START_MS + n * 1000).toISOString();
      insertEvent.run(idOf('3', n), orgId, projectId, time, time, `event-${n % 10}`, `{"n":${n}}`);
    }
    for (let n = 0; n < pipelines; n += 1) {
      const time = new Date(START_MS + n * 1000).toISOString();
      insertPipeline.run(idOf('4', n), orgId, projectId, idOf('3', n), time, time, time, time);
    }
    db.exec(TRIM_CHANGE_LOG);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** The same rows into the stopped server's PostgreSQL database, one statement a table. */
async function writePostgresRows(
  url: string,
  orgId: string,
  projectId: string,
  events: number,
  pipelines: number,
): Promise<void> {
  // Rows 0 to $3 - 1, the time of each $4 + n seconds, as in writeSqlite.
  const series = `generate_series(0, $3::bigint - 1) AS n, pg_temp.iso_time($4 + n * 1000) AS t`;
  await writePostgres(url, async (client) => {
    await client.query(
      `INSERT INTO events (id, org_id, project_id, creation_time, event_time, connector, name, data)
       SELECT pg_temp.id_of('3', n), $1, $2, t, t, 'custom', 'event-' || n % 10, '{"n":' || n || '}'
         FROM ${series}`,
      [orgId, projectId, events, START_MS],
    );
    await client.query(
      `INSERT INTO pipelines (id, org_id, project_id, name, event_id, event_time, concurrent, creation_time,
                              start_time, end_time, status, spec, environment)
       SELECT pg_temp.id_of('4', n), $1, $2, 'bulk', pg_temp.id_of('3', n), t, 0, t, t, t,
              'successful', '{}', '{}'
         FROM ${series}`,
      [orgId, projectId, pipelines, START_MS],
    );
  });
}

/**
 * A server whose project holds 1,000,000 events and 10,000 finished pipelines, written
 * straight into its database (SQLite's file or PostgreSQL's) while it is stopped (the API would
 * take far longer).
 */
export async function startWithBigData(
  context: Context,
  events = EVENT_COUNT,
  pipelines = PIPELINE_COUNT,
): Promise<BigData> {
  const dataDir = context.dir('big');
  const first = await startPipewright(dataDir);
  const { data: project } = await first.client().POST('/projects', { body: { name: 'big' } });
  await first.stop();
  const projectId = project?.id ?? '';
  const orgId = project?.org_id ?? '';
  context.log(`writing ${events} events and ${pipelines} pipelines`);
  if (first.database === undefined) writeSqlite(dataDir, orgId, projectId, events, pipelines);
  else await writePostgresRows(first.database, orgId, projectId, events, pipelines);
  // The rows are older than the default retentions: kept, so that what is measured stays (and
  // no purge runs meanwhile).
  const keep = ['--event-retention', 'off', '--step-output-retention', 'off'];
  return { server: await startPipewright(dataDir, keep), projectId };
}
