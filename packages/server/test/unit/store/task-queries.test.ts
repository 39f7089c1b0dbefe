import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/db.js';
import { NEXT_SLICE, RECOUNT_BLOCKERS, RECOUNT_SLICE } from '../../../src/store/tasks.store.js';

const dir = mkdtempSync(join(tmpdir(), 'pipewright-plans-'));
const db = openDatabase(join(dir, 'pipewright.db'));
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const ID = '2Fv9zQx0bY3kLmN8pQrStUvWxYz';

/** SQLite's plan of a statement, a line per step. */
const planOf = (sql: string, parameters: Record<string, unknown>) =>
  db
    .prepare<[Record<string, unknown>], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
    .all(parameters)
    .map((row) => row.detail);

const slice = { project_id: ID, pipeline_id: ID, after: '', last: ID };

describe('the plan of recounting what holds the tasks of a pipeline', () => {
  // Its cost must follow the edges of the pipeline, not its tasks squared: the instances of
  // each dependency are found by (pipeline_id, name), never by scanning the pipeline's tasks.
  it.each([
    ['every waiting task', RECOUNT_BLOCKERS, { pipeline_id: ID }],
    ['a slice of them', RECOUNT_SLICE, slice],
  ])('reads each dependency, then its instances by pipeline and name: %s', (_, sql, parameters) => {
    const plan = planOf(sql, parameters);
    const dependencies = plan.findIndex((step) => /SCAN d VIRTUAL TABLE/.test(step));
    const instances = plan.findIndex((step) => /SEARCH u USING .*\(pipeline_id=\? AND name=\?\)/.test(step));
    expect(dependencies, plan.join('\n')).toBeGreaterThanOrEqual(0);
    expect(instances, plan.join('\n')).toBeGreaterThan(dependencies);
  });

  // The pipeline's row (large: its spec) is read once per statement, not once per task.
  it.each([
    ['every waiting task', RECOUNT_BLOCKERS, { pipeline_id: ID }],
    ['a slice of them', RECOUNT_SLICE, slice],
  ])('reads the pipeline before its tasks: %s', (_, sql, parameters) => {
    const plan = planOf(sql, parameters);
    expect(plan[0], plan.join('\n')).toMatch(/SEARCH pipelines USING .*\(id=\?\)/);
    expect(
      plan.filter((step) => /pipelines/.test(step)),
      plan.join('\n'),
    ).toHaveLength(1);
  });
});

describe('the plan of releasing the tasks of a pipeline a slice at a time', () => {
  // Each slice costs its own tasks, however many the pipeline has: both statements seek to the
  // slice by (project_id, pipeline_id, id).
  it('finds the next slice by pipeline and id', () => {
    const plan = planOf(NEXT_SLICE, { project_id: ID, pipeline_id: ID, after: '', size: 1000 });
    expect(plan.join('\n')).toMatch(
      /SEARCH tasks USING COVERING INDEX tasks_by_project_pipeline \(project_id=\? AND pipeline_id=\? AND id>\?\)/,
    );
  });

  it('recounts the slice by pipeline and id range', () => {
    const plan = planOf(RECOUNT_SLICE, slice);
    expect(plan.join('\n')).toMatch(
      /SEARCH tasks USING INDEX tasks_by_project_pipeline \(project_id=\? AND pipeline_id=\? AND id>\? AND id<\?\)/,
    );
  });
});
