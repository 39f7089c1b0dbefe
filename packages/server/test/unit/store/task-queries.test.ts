import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Compilable } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/db.js';
import { sqlite } from '../../../src/store/dialect.js';
import { nextSliceQuery, recountBlockersQuery, recountSliceQuery } from '../../../src/store/tasks.store.js';

const dir = mkdtempSync(join(tmpdir(), 'pipewright-plans-'));
const db = openDatabase(join(dir, 'pipewright.db'));
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const ID = '2Fv9zQx0bY3kLmN8pQrStUvWxYz';

/** SQLite's plan of a query, a line per step. */
const planOf = (query: Compilable<unknown>) => {
  const { sql, parameters } = query.compile();
  return db
    .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
    .all(...parameters)
    .map((row) => row.detail);
};

const recountAll = recountBlockersQuery(sqlite, ID);
const recountSlice = recountSliceQuery(sqlite, { projectId: ID, pipelineId: ID, after: '', last: ID });

describe('the plan of recounting what holds the tasks of a pipeline', () => {
  // Its cost must follow the edges of the pipeline, not its tasks squared: the instances of
  // each dependency are found by (pipeline_id, name), never by scanning the pipeline's tasks.
  it.each([
    ['every waiting task', recountAll],
    ['a slice of them', recountSlice],
  ])('reads each dependency, then its instances by pipeline and name: %s', (_, query) => {
    const plan = planOf(query);
    const dependencies = plan.findIndex((step) => /SCAN d VIRTUAL TABLE/.test(step));
    const instances = plan.findIndex((step) => /SEARCH u USING .*\(pipeline_id=\? AND name=\?\)/.test(step));
    expect(dependencies, plan.join('\n')).toBeGreaterThanOrEqual(0);
    expect(instances, plan.join('\n')).toBeGreaterThan(dependencies);
  });

  // The pipeline's row (large: its spec) is read once per statement, not once per task.
  it.each([
    ['every waiting task', recountAll],
    ['a slice of them', recountSlice],
  ])('reads the pipeline before its tasks: %s', (_, query) => {
    const plan = planOf(query);
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
    const plan = planOf(nextSliceQuery(sqlite, ID, ID, '', 1000));
    expect(plan.join('\n')).toMatch(
      /SEARCH tasks USING COVERING INDEX tasks_by_project_pipeline \(project_id=\? AND pipeline_id=\? AND id>\?\)/,
    );
  });

  it('recounts the slice by pipeline and id range', () => {
    const plan = planOf(recountSlice);
    expect(plan.join('\n')).toMatch(
      /SEARCH tasks USING INDEX tasks_by_project_pipeline \(project_id=\? AND pipeline_id=\? AND id>\? AND id<\?\)/,
    );
  });
});
