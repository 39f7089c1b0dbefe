import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/db.js';
import { RECOUNT_BLOCKERS } from '../../src/store/tasks.store.js';

const dir = mkdtempSync(join(tmpdir(), 'pipewright-plans-'));
const db = openDatabase(join(dir, 'pipewright.db'));
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** SQLite's plan of a statement, a line per step. */
const planOf = (sql: string) =>
  db
    .prepare<[string], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
    .all('2Fv9zQx0bY3kLmN8pQrStUvWxYz')
    .map((row) => row.detail);

describe('the plan of recounting what holds the tasks of a pipeline', () => {
  // Its cost must follow the edges of the pipeline, not its tasks squared: the instances of
  // each dependency are found by (pipeline_id, name), never by scanning the pipeline's tasks.
  it('reads each dependency, then its instances by pipeline and name', () => {
    const plan = planOf(RECOUNT_BLOCKERS);
    const dependencies = plan.findIndex((step) => /SCAN d VIRTUAL TABLE/.test(step));
    const instances = plan.findIndex((step) => /SEARCH u USING .*\(pipeline_id=\? AND name=\?\)/.test(step));
    expect(dependencies, plan.join('\n')).toBeGreaterThanOrEqual(0);
    expect(instances, plan.join('\n')).toBeGreaterThan(dependencies);
  });
});
