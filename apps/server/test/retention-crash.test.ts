import { join } from 'node:path';
import { tempDirs } from '@pipewright/testing';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { programStarter } from './program.js';

// The purge of expired data, killed with SIGKILL in the middle: the data stays consistent, and
// the next start finishes the purge.

const EXPIRING = 8_000;
const DAY_MS = 86_400_000;

const tempDir = tempDirs();
const startProgram = programStarter();
const start = (dataDir: string) => startProgram(dataDir, ['--task-users', 'off']);

const idOf = (prefix: string, n: number) => `${prefix}${n.toString(36).padStart(26, '0')}`;
const UNFINISHED = idOf('9', 0);

/**
 * Writes, into the stopped server's database, finished pipelines (ids `4...`) whose 7-day
 * retention ended a year ago, each with its event, command execution, task, step, output and
 * scratchpad entry, all as old; and one unfinished pipeline as old, its task waiting for a retry
 * due in 2100, which nothing may delete.
 */
function writeExpiredRows(file: string): void {
  const db = new Database(file);
  const { id: orgId } = db.prepare<[], { id: string }>('SELECT id FROM organizations').get() ?? { id: '' };
  const projectId = idOf('p', 0);
  db.prepare('INSERT INTO projects (id, org_id, name) VALUES (?, ?, ?)').run(projectId, orgId, 'old');
  const event = db.prepare(
    `INSERT INTO events (id, org_id, project_id, command_id, creation_time, event_time, connector, name, data)
     VALUES (?, @org, @project, 'cmd', @time, @time, 'command', 'execution', '{"parameters":{}}')`,
  );
  const execution = db.prepare(
    `INSERT INTO command_executions (id, org_id, project_id, execution_time, command_id, parameters, event_id, pipeline_ids)
     VALUES (?, @org, @project, @time, 'cmd', '{}', ?, ?)`,
  );
  const pipeline = db.prepare(
    `INSERT INTO pipelines (id, org_id, project_id, name, event_id, event_time, concurrent, creation_time,
                            start_time, end_time, status, spec, environment)
     VALUES (?, @org, @project, 'old', ?, @time, 1, @time, @time, ?, ?,
             '{"type":"pipeline","version":1,"name":"old","data":{"retention":7,"tasks":[{"task":"t"}]}}', '{}')`,
  );
  const task = db.prepare(
    `INSERT INTO tasks (id, org_id, project_id, pipeline_id, name, pipeline_task, spec, task_identities,
                        dependencies, instance_id, retry, status, creation_time, not_before)
     VALUES (?, @org, @project, ?, 't', '{"task":"t"}',
             '{"type":"task","version":1,"name":"t","data":{"steps":[{"command":"true"}]}}', '[]', '[]', 1, ?, ?,
             @time, ?)`,
  );
  const step = db.prepare(
    `INSERT INTO step_executions (task_id, attempt, step_index, status, exit_code, start_time, end_time)
     VALUES (?, 0, 0, 'successful', 0, @time, @time)`,
  );
  const chunk = db.prepare(
    `INSERT INTO step_output_chunks (task_id, attempt, step_index, seq, text) VALUES (?, 0, 0, 0, 'done\n')`,
  );
  const scratchpad = db.prepare(
    `INSERT INTO scratchpad_entries (pipeline_id, key, value) VALUES (?, 'k', 'v')`,
  );
  const row = { org: orgId, project: projectId, time: new Date(Date.now() - 365 * DAY_MS).toISOString() };
  const write = (n: number, finished: boolean) => {
    const [pipelineId, eventId, taskId] = finished
      ? [idOf('4', n), idOf('6', n), idOf('8', n)]
      : [UNFINISHED, idOf('5', 0), idOf('7', 0)];
    event.run(eventId, row);
    execution.run(idOf('c', n + (finished ? 0 : EXPIRING)), eventId, JSON.stringify([pipelineId]), row);
    pipeline.run(pipelineId, eventId, finished ? row.time : null, finished ? 'successful' : 'started', row);
    task.run(
      taskId,
      pipelineId,
      finished ? 0 : 1,
      finished ? 'successful' : 'created',
      finished ? null : '2100-01-01T00:00:00.000Z',
      row,
    );
    step.run(taskId, row);
    chunk.run(taskId);
    scratchpad.run(pipelineId);
  };
  db.transaction(() => {
    for (let n = 0; n < EXPIRING; n += 1) write(n, true);
    write(0, false);
  })();
  db.close();
}

const EXPIRING_LEFT = `SELECT count(*) FROM pipelines WHERE id >= '4' AND id < '5'`;

/** How many of the expiring pipelines are left (cheap enough to poll). */
function expiringLeft(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(EXPIRING_LEFT).pluck().get() as number;
  } finally {
    db.close();
  }
}

/** What is left of the expiring pipelines, and every way the data could be inconsistent. */
function inspect(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    const count = (sql: string) => (db.prepare(sql).pluck().get() as number) ?? -1;
    return {
      integrity: db.pragma('integrity_check', { simple: true }),
      foreignKeyViolations: db.pragma('foreign_key_check') as unknown[],
      expiringLeft: count(EXPIRING_LEFT),
      // Each pipeline left keeps all it owns, and owns nothing once gone.
      perPipeline: [
        count('SELECT count(*) FROM tasks'),
        count('SELECT count(*) FROM step_executions'),
        count('SELECT count(*) FROM step_output_chunks'),
        count('SELECT count(*) FROM scratchpad_entries'),
      ].map((n) => n - count('SELECT count(*) FROM pipelines')),
      pipelinesWithoutEvent: count(
        'SELECT count(*) FROM pipelines p WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = p.event_id)',
      ),
      executionsWithoutEvent: count(
        'SELECT count(*) FROM command_executions c WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = c.event_id)',
      ),
      // Events (and their executions) of deleted pipelines go with them: a year old, past the default 90 days.
      eventsWithoutPipeline: count(
        'SELECT count(*) FROM events e WHERE NOT EXISTS (SELECT 1 FROM pipelines p WHERE p.event_id = e.id)',
      ),
      unfinished: count(
        `SELECT count(*) FROM pipelines p
         JOIN events e ON e.id = p.event_id JOIN command_executions c ON c.event_id = e.id
         JOIN tasks t ON t.pipeline_id = p.id JOIN scratchpad_entries s ON s.pipeline_id = p.id
         WHERE p.id = '${UNFINISHED}' AND p.status = 'started'`,
      ),
    };
  } finally {
    db.close();
  }
}

const consistent = {
  integrity: 'ok',
  foreignKeyViolations: [],
  perPipeline: [0, 0, 0, 0],
  pipelinesWithoutEvent: 0,
  executionsWithoutEvent: 0,
  eventsWithoutPipeline: 0,
  unfinished: 1,
};

// The purger yields after every batch, sizes its batches by the time they take, and runs at a
// lower CPU priority than the server: on a busy machine it gets little CPU (under `stress --cpu 4`
// on 2 CPUs a whole purge took over four minutes). So the test waits for as long as the purge
// makes progress, and fails once it has made none for STALL_MS.
const STALL_MS = 180_000;

/** Waits until fewer than `target` expiring pipelines are left, while their count keeps falling. */
async function purgedBelow(file: string, target: number): Promise<void> {
  let left = expiringLeft(file);
  let progressAt = Date.now();
  while (left >= target) {
    if (Date.now() - progressAt > STALL_MS) {
      throw new Error(`the purge made no progress for ${STALL_MS} ms, with ${left} expiring pipelines left`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = expiringLeft(file);
    if (now < left) progressAt = Date.now();
    left = now;
  }
}

describe('retention', () => {
  it('leaves consistent data when killed in the middle of a purge, which the next start finishes', {
    // A bound for a broken run only: the waits below end on progress, not on time.
    timeout: 30 * 60_000,
  }, async () => {
    const dataDir = tempDir('pipewright-purge-');
    const file = join(dataDir, 'pipewright.db');
    await (await start(dataDir)).stop();
    writeExpiredRows(file);
    expect(inspect(file)).toMatchObject({ ...consistent, expiringLeft: EXPIRING });

    // Its first pass begins as it starts: killed once part of the pipelines are gone.
    const first = await start(dataDir);
    await purgedBelow(file, EXPIRING * 0.9);
    expect(await first.stop('SIGKILL')).toBeNull();
    const afterCrash = inspect(file);
    expect(afterCrash.expiringLeft).toBeGreaterThan(0);
    expect(afterCrash).toMatchObject(consistent);

    const second = await start(dataDir);
    await purgedBelow(file, 1);
    await second.stop();
    expect(inspect(file)).toMatchObject(consistent);
  });
});
