import { describe, expect, it } from 'vitest';
import { createPurger, type RetentionOptions } from '../../../src/scheduler/purger.js';
import { type Db, openDatabase } from '../../../src/store/db.js';
import { createStore } from '../../../src/store/index.js';

// The walk over events keeps where it is: an event still referred to when the walk passes it
// goes with the last of its pipelines, and the walk must look at it again whenever that would
// miss it (a retention made longer, event retention turned off for a while).

const DAY_MS = 86_400_000;
const START = Date.parse('2026-01-01T00:00:00.000Z');
const day = (n: number) => new Date(START + n * DAY_MS);

function world() {
  const db: Db = openDatabase(':memory:');
  db.exec(`INSERT INTO organizations (id, name, creation_time) VALUES ('o', 'o', 't');
           INSERT INTO projects (id, org_id, name) VALUES ('p', 'o', 'p')`);
  const time = day(0).toISOString();
  db.prepare(
    `INSERT INTO events (id, org_id, project_id, creation_time, event_time, connector, name, data)
     VALUES ('e', 'o', 'p', ?, ?, 'custom', 'push', '{}')`,
  ).run(time, time);
  // Finished on day 0, without a retention of its own.
  db.prepare(
    `INSERT INTO pipelines (id, org_id, project_id, name, event_id, event_time, concurrent, creation_time, end_time,
                            status, spec, environment)
     VALUES ('p1', 'o', 'p', 'deploy', 'e', ?, 0, ?, ?, 'successful', '{"data":{"tasks":[]}}', '{}')`,
  ).run(time, time, time);
  const store = createStore(db);
  /** A pass at `when` by a server started with `options`. */
  const passAt = (when: number, options: RetentionOptions) =>
    createPurger(store, { ...options, restMs: 0 }, () => day(when)).purgeOnce();
  const has = (table: 'events' | 'pipelines') =>
    db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() === 1;
  return { passAt, has };
}

describe('purger', () => {
  it('deletes an event freed behind its walk once the retention made longer has passed', async () => {
    const { passAt, has } = world();
    await passAt(15, { eventDays: 10 }); // the walk passes the event, its pipeline left
    expect(has('events')).toBe(true);
    await passAt(25, { eventDays: 30, pipelineDays: 20 }); // the pipeline goes; the event is not 30 days old
    expect([has('pipelines'), has('events')]).toEqual([false, true]);
    await passAt(31, { eventDays: 30, pipelineDays: 20 });
    expect(has('events')).toBe(false);
  });

  it('deletes an event freed while event retention was off once it is on again', async () => {
    const { passAt, has } = world();
    await passAt(15, { eventDays: 10 });
    await passAt(25, { pipelineDays: 20 }); // the pipeline goes; events are kept
    expect([has('pipelines'), has('events')]).toEqual([false, true]);
    await passAt(26, { eventDays: 10 });
    expect(has('events')).toBe(false);
  });

  it('keeps the event while its pipeline is left, however old', async () => {
    const { passAt, has } = world();
    await passAt(1000, { eventDays: 1 });
    expect([has('pipelines'), has('events')]).toEqual([true, true]);
  });
});
