import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Context } from './context.js';
import { DATABASE_FILE, type Pipewright, startPipewright } from './pipewright.js';

export const EVENT_COUNT = 1_000_000;
export const PIPELINE_COUNT = 10_000;

export interface BigData {
  server: Pipewright;
  projectId: string;
}

/** Ids shaped like KSUIDs (27 base62 characters), increasing with `n`. */
const idOf = (prefix: string, n: number) => `${prefix}${n.toString(36).padStart(26, '0')}`;

/**
 * A server whose project holds 1,000,000 events and 10,000 finished pipelines, written
 * straight into its database while it is stopped (the API would take far longer).
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
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  db.transaction(() => {
    for (let n = 0; n < events; n += 1) {
      const time = new Date(start + n * 1000).toISOString();
      insertEvent.run(idOf('3', n), orgId, projectId, time, time, `event-${n % 10}`, `{"n":${n}}`);
    }
    for (let n = 0; n < pipelines; n += 1) {
      const time = new Date(start + n * 1000).toISOString();
      insertPipeline.run(idOf('4', n), orgId, projectId, idOf('3', n), time, time, time, time);
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  // The rows are older than the default retentions: kept, so that what is measured stays (and
  // no purge runs meanwhile).
  const keep = ['--event-retention', 'off', '--step-output-retention', 'off'];
  return { server: await startPipewright(dataDir, keep), projectId };
}
