import { readdirSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../../src/store/db.js';

// Migration 008 gives the tasks and pipelines stored before it what the scheduler now reads:
// what holds each waiting task, the dependents of each task, and the queues of pipelines.

const MIGRATIONS = new URL('../../../src/store/migrations/sqlite/', import.meta.url);

/** A database at version 7, as a server before migration 008 left it. */
function databaseBefore008(): Database.Database {
  const db = new Database(':memory:');
  for (const name of readdirSync(MIGRATIONS)
    .filter((n) => /^00[1-7]_.*\.sql$/.test(n))
    .sort()) {
    db.exec(readFileSync(new URL(name, MIGRATIONS), 'utf8'));
  }
  db.pragma('user_version = 7');
  db.exec(`INSERT INTO organizations (id, name, creation_time) VALUES ('o', 'o', 't');
           INSERT INTO projects (id, org_id, name) VALUES ('p', 'o', 'p')`);
  return db;
}

function addPipeline(db: Database.Database, id: string, created: string, status: string, concurrent = 0) {
  db.prepare(
    `INSERT INTO pipelines (id, org_id, project_id, name, event_id, event_time, concurrent, creation_time, status, spec, environment)
     VALUES (?, 'o', 'p', 'deploy', 'e', 't', ?, ?, ?, '{}', '{}')`,
  ).run(id, concurrent, created, status);
}

function addTask(
  db: Database.Database,
  pipelineId: string,
  name: string,
  status: string,
  dependencies: string[] = [],
  onFailure?: string,
) {
  db.prepare(
    `INSERT INTO tasks (id, org_id, project_id, pipeline_id, name, pipeline_task, spec, task_identities, dependencies,
                        instance_id, status, creation_time)
     VALUES (?, 'o', 'p', ?, ?, ?, '{}', '[]', ?, 1, ?, 't')`,
  ).run(
    `${pipelineId}-${name}`,
    pipelineId,
    name,
    JSON.stringify({ task: name, ...(onFailure ? { on_failure: onFailure } : {}) }),
    JSON.stringify(dependencies),
    status,
  );
}

describe('migration 008 (ready tasks)', () => {
  it('counts what holds each waiting task, records dependents, and queues pipelines behind older ones', () => {
    const db = databaseBefore008();
    // p1 runs: a done, b failed with on_failure continue, c waits for a and b, d for c.
    addPipeline(db, 'p1', 't1', 'started');
    addTask(db, 'p1', 'a', 'successful');
    addTask(db, 'p1', 'b', 'failed', [], 'continue');
    addTask(db, 'p1', 'c', 'created', ['a', 'b']);
    addTask(db, 'p1', 'd', 'created', ['c']);
    // p2, of the same non-concurrent resource, waits behind p1; p3 is concurrent and does not.
    addPipeline(db, 'p2', 't2', 'created');
    addTask(db, 'p2', 'a', 'created');
    addPipeline(db, 'p3', 't3', 'created', 1);
    addTask(db, 'p3', 'a', 'created');
    migrate(db);

    const tasks = db.prepare('SELECT id, blockers, dependents FROM tasks ORDER BY id').all();
    expect(tasks).toEqual([
      { id: 'p1-a', blockers: 0, dependents: '["c"]' },
      { id: 'p1-b', blockers: 0, dependents: '["c"]' },
      { id: 'p1-c', blockers: 0, dependents: '["d"]' },
      { id: 'p1-d', blockers: 1, dependents: '[]' },
      { id: 'p2-a', blockers: 1, dependents: '[]' },
      { id: 'p3-a', blockers: 0, dependents: '[]' },
    ]);
    expect(db.prepare('SELECT id, queued FROM pipelines ORDER BY id').all()).toEqual([
      { id: 'p1', queued: 0 },
      { id: 'p2', queued: 1 },
      { id: 'p3', queued: 0 },
    ]);
    expect(db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(8);
  });
});
