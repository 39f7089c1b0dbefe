import { readdirSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../../src/store/db.js';

// Migration 011 numbers the runs of tasks: what was stored before it becomes run 1, in tables
// made anew with the run in their keys.

const MIGRATIONS = new URL('../../../src/store/migrations/sqlite/', import.meta.url);

/** A database at version 10, as a server before migration 011 left it, with one task that ran two steps. */
function databaseBefore011(): Database.Database {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  for (const name of readdirSync(MIGRATIONS)
    .filter((n) => /^0(0\d|10)_.*\.sql$/.test(n))
    .sort()) {
    db.exec(readFileSync(new URL(name, MIGRATIONS), 'utf8'));
  }
  db.pragma('user_version = 10');
  db.exec(`
    INSERT INTO organizations (id, name, creation_time) VALUES ('o', 'o', 't');
    INSERT INTO projects (id, org_id, name) VALUES ('p', 'o', 'p');
    INSERT INTO events (id, org_id, project_id, connector, name, event_time, creation_time, data)
      VALUES ('e', 'o', 'p', 'custom', 'go', 't', 't', '{}');
    INSERT INTO pipelines (id, org_id, project_id, name, event_id, event_time, concurrent, creation_time, status,
                           spec, environment)
      VALUES ('pl', 'o', 'p', 'deploy', 'e', 't', 0, 't', 'failed', '{}', '{}');
    INSERT INTO tasks (id, org_id, project_id, pipeline_id, name, pipeline_task, spec, task_identities,
                       dependencies, instance_id, retry, status, creation_time)
      VALUES ('t', 'o', 'p', 'pl', 'build', '{}', '{}', '[]', '[]', 1, 1, 'failed', 't');
    INSERT INTO step_executions (task_id, attempt, step_index, label, status, exit_code, start_time, end_time,
                                 output_truncated)
      VALUES ('t', 0, 0, 'Build', 'failed', 2, 't1', 't2', 0), ('t', 1, 0, 'Build', 'failed', 2, 't3', 't4', 1);
    INSERT INTO step_output_chunks (task_id, attempt, step_index, seq, text)
      VALUES ('t', 0, 0, 0, 'first '), ('t', 0, 0, 1, 'try'), ('t', 1, 0, 0, 'second try');`);
  return db;
}

describe('migration 011 (task runs)', () => {
  it('puts the tasks, step executions and output stored before it in run 1, keeping every column', () => {
    const db = databaseBefore011();
    migrate(db);

    expect(db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(11);
    expect(db.prepare('SELECT id, run, retry FROM tasks').all()).toEqual([{ id: 't', run: 1, retry: 1 }]);
    expect(
      db
        .prepare(
          `SELECT task_id, run, attempt, step_index, label, status, exit_code, start_time, end_time, output_truncated
           FROM step_executions ORDER BY run, attempt, step_index`,
        )
        .all(),
    ).toEqual([
      {
        task_id: 't',
        run: 1,
        attempt: 0,
        step_index: 0,
        label: 'Build',
        status: 'failed',
        exit_code: 2,
        start_time: 't1',
        end_time: 't2',
        output_truncated: 0,
      },
      {
        task_id: 't',
        run: 1,
        attempt: 1,
        step_index: 0,
        label: 'Build',
        status: 'failed',
        exit_code: 2,
        start_time: 't3',
        end_time: 't4',
        output_truncated: 1,
      },
    ]);
    expect(
      db.prepare('SELECT run, attempt, seq, text FROM step_output_chunks ORDER BY attempt, seq').all(),
    ).toEqual([
      { run: 1, attempt: 0, seq: 0, text: 'first ' },
      { run: 1, attempt: 0, seq: 1, text: 'try' },
      { run: 1, attempt: 1, seq: 0, text: 'second try' },
    ]);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    expect(
      db
        .prepare(`SELECT name FROM sqlite_schema WHERE tbl_name = 'step_executions' AND type = 'index'`)
        .pluck()
        .all(),
    ).toContain('step_executions_running');
  });

  it('keeps each run its own steps and output, and deletes them all with their pipeline', () => {
    const db = databaseBefore011();
    migrate(db);
    // A second run of the same attempt and step, which the primary key held before now refused.
    db.exec(`
      INSERT INTO step_executions (task_id, run, attempt, step_index, status, start_time)
        VALUES ('t', 2, 0, 0, 'successful', 't5');
      INSERT INTO step_output_chunks (task_id, run, attempt, step_index, seq, text) VALUES ('t', 2, 0, 0, 0, 'ok');`);
    // Output belongs to a step of its own run.
    expect(() =>
      db.exec(`INSERT INTO step_output_chunks (task_id, run, attempt, step_index, seq, text)
               VALUES ('t', 3, 0, 0, 0, 'no such step')`),
    ).toThrow(/FOREIGN KEY/);

    db.exec(`DELETE FROM pipelines WHERE id = 'pl'`);
    expect(db.prepare('SELECT count(*) FROM step_executions').pluck().get()).toBe(0);
    expect(db.prepare('SELECT count(*) FROM step_output_chunks').pluck().get()).toBe(0);
  });
});
