import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompiledQuery } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/db.js';
import { sqlite } from '../../../src/store/dialect.js';
import { createRetentionStore } from '../../../src/store/retention.store.js';
import type { Executor } from '../../../src/store/sql.js';

// Retention finds what expired through the partial indexes of migration 009, which SQLite uses
// only for queries that write their expressions and terms as the indexes do
// (store/retention.store.ts): a purge must not scan the pipelines.

const dir = mkdtempSync(join(tmpdir(), 'pipewright-plans-'));
const db = openDatabase(join(dir, 'pipewright.db'));
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Keeps the queries the store builds, finds nothing. */
const queries: CompiledQuery[] = [];
const recording: Executor = {
  async all(query) {
    queries.push(query.compile());
    return [];
  },
  async first(query) {
    queries.push(query.compile());
    return undefined;
  },
  async run(query) {
    queries.push(query.compile());
    return { changes: 0 };
  },
};
const retention = createRetentionStore(sqlite, recording);
const TIME = '2026-11-22T10:00:00.000Z';
const cutoffs = { now: TIME, pipelines: TIME, stepOutput: TIME, events: TIME };

/** SQLite's plans of the queries the store runs for `call`, a line per step. */
async function plansOf(call: () => Promise<unknown>) {
  queries.length = 0;
  await call();
  return queries.map((query) =>
    db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${query.sql}`)
      .all(...query.parameters)
      .map((step) => step.detail)
      .join('\n'),
  );
}

describe('the plan of finding what expired', () => {
  it.each([
    [
      'pipelines past their own retention',
      () => retention.deleteExpiredPipelines(cutoffs, 100),
      /SEARCH pipelines USING INDEX pipelines_expiring \(<expr><\?\)/,
    ],
    [
      'pipelines past the server’s retention',
      () => retention.deletePipelinesEndedBefore(cutoffs, 100),
      /SEARCH pipelines USING INDEX pipelines_ended_without_retention \(end_time<\?\)/,
    ],
    [
      'the next pipelines whose step output expired',
      () => retention.deleteStepOutput(cutoffs, 100),
      /SEARCH pipelines USING INDEX pipelines_ended_without_retention \(\(end_time,id\)>\(\?,\?\) AND end_time<\?\)/,
    ],
    [
      'the next events',
      () => retention.deleteEvents(cutoffs, 100),
      /SEARCH events USING COVERING INDEX events_by_creation_time \(\(creation_time,id\)>\(\?,\?\) AND creation_time<\?\)/,
    ],
  ])('finds %s through its index', async (_, call, index) => {
    const plans = await plansOf(call);
    expect(plans.join('\n')).toMatch(index);
    for (const plan of plans) expect(plan).not.toMatch(/SCAN/);
  });

  it('looks for anything expired through the indexes', async () => {
    const plans = (await plansOf(() => retention.anyExpired(cutoffs))).join('\n');
    expect(plans).toMatch(/SEARCH pipelines USING INDEX pipelines_expiring \(<expr><\?\)/);
    expect(plans).toMatch(/SEARCH pipelines USING INDEX pipelines_ended_without_retention \(end_time<\?\)/);
    expect(plans).not.toMatch(/SCAN/);
  });
});
