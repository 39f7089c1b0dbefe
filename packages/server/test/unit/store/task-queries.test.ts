import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Compilable } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/db.js';
import { sqlite } from '../../../src/store/dialect.js';
import type { Executor } from '../../../src/store/sql.js';
import {
  createTaskStore,
  nextSliceQuery,
  recountBlockersQuery,
  recountSliceQuery,
} from '../../../src/store/tasks.store.js';

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

describe("the store's prepared queries", () => {
  // The store builds these once and then only swaps their parameters: what it runs must be the
  // very statements whose plans are checked above, with each call's values.
  const ran: Compilable<unknown>[] = [];
  const x: Executor = {
    all: async (query) => {
      ran.push(query);
      return [];
    },
    first: async (query) => {
      ran.push(query);
      return undefined;
    },
    run: async (query) => {
      ran.push(query);
      return { changes: 0 };
    },
  };
  const store = createTaskStore(sqlite, x);
  const OTHER = '2Fv9zQx0bY3kLmN8pQrStUvWxZa';

  it.each([
    ['recounting a pipeline', () => store.recountBlockers(OTHER), recountBlockersQuery(sqlite, OTHER)],
    [
      'recounting a slice',
      () => store.recountSlice(ID, OTHER, 'a', 'b'),
      recountSliceQuery(sqlite, { projectId: ID, pipelineId: OTHER, after: 'a', last: 'b' }),
    ],
    ['finding a slice', () => store.nextSlice(OTHER, ID, 'a', 7), nextSliceQuery(sqlite, OTHER, ID, 'a', 7)],
  ])('runs the statement of %s with the values of each call', async (_, call, expected) => {
    await call();
    await call();
    expect(ran.pop()?.compile()).toMatchObject({
      sql: expected.compile().sql,
      parameters: expected.compile().parameters,
    });
  });
});
