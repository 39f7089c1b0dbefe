import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompiledQuery } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { PageRequest } from '../../../src/domain/cursor.js';
import { openDatabase } from '../../../src/store/db.js';
import { sqlite } from '../../../src/store/dialect.js';
import { createPipelineStore, type PipelineFilters } from '../../../src/store/pipelines.store.js';
import type { Executor } from '../../../src/store/sql.js';

// Every filter of GET /pipelines reads through an index (migration 016): a list of 10,000
// pipelines narrowed to a few must not scan the project's pipelines.

const dir = mkdtempSync(join(tmpdir(), 'pipewright-plans-'));
const db = openDatabase(join(dir, 'pipewright.db'));
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Keeps the queries the store builds, runs none. */
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
const pipelines = createPipelineStore(sqlite, recording);
const ID = '2Fv9zQx0bY3kLmN8pQrStUvWxYz';
const TIME = '2026-11-22T10:00:00.000Z';

/** SQLite's plan of the page query the store runs for these filters and sort. */
async function planOf(
  filters: PipelineFilters,
  sort: PageRequest['sort'],
  order: PageRequest['order'] = 'desc',
) {
  queries.length = 0;
  await pipelines.list(ID, filters, { size: 20, sort, order });
  const page = queries.find((query) => /order by .* limit \?$/is.test(query.sql));
  if (!page) throw new Error('the store ran no page query');
  return db
    .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${page.sql}`)
    .all(...page.parameters)
    .map((row) => row.detail);
}

describe('the plan of listing pipelines', () => {
  it.each([
    [
      'name',
      { name: 'deploy' },
      /SEARCH pipelines USING INDEX pipelines_by_project_name \(project_id=\? AND name=\?\)/,
    ],
    [
      'trigger_id',
      { triggerId: ID },
      /SEARCH pipelines USING INDEX pipelines_by_project_trigger \(project_id=\? AND trigger_id=\?\)/,
    ],
    [
      'command_id',
      { commandId: ID },
      /SEARCH pipelines USING INDEX pipelines_by_project_command \(project_id=\? AND command_id=\?\)/,
    ],
    [
      'a period of creation',
      { createdSince: TIME, createdBefore: TIME },
      /SEARCH pipelines USING INDEX pipelines_by_project_creation_time \(project_id=\? AND creation_time>\? AND creation_time<\?\)/,
    ],
    [
      'a name and a period of creation',
      { name: 'deploy', createdSince: TIME, createdBefore: TIME },
      /SEARCH pipelines USING INDEX pipelines_by_project_name \(project_id=\? AND name=\? AND creation_time>\? AND creation_time<\?\)/,
    ],
  ])(
    'reads by %s through its index, sorted by creation_time without sorting',
    async (_name, filters, index) => {
      const plan = await planOf(filters, 'creation_time');
      expect(plan.join('\n')).toMatch(index);
      expect(plan.join('\n')).not.toMatch(/SCAN|TEMP B-TREE/);
    },
  );

  it.each([
    ['name', { name: 'deploy' }],
    ['trigger_id', { triggerId: ID }],
    ['command_id', { commandId: ID }],
  ])('reads by %s through its index under the other sorts too', async (_name, filters) => {
    for (const sort of ['id', 'event_time']) {
      const plan = await planOf(filters, sort);
      expect(plan.join('\n'), sort).toMatch(
        /SEARCH pipelines USING INDEX pipelines_by_project_(name|trigger|command)/,
      );
      expect(plan.join('\n'), sort).not.toMatch(/SCAN/);
    }
  });
});

describe('the plan of settling a pipeline at the end of one of its tasks', () => {
  it('tests its unfinished tasks through their partial index, and reads its tasks by pipeline', async () => {
    queries.length = 0;
    await pipelines.settle(ID, TIME);
    const [settle] = queries;
    if (!settle) throw new Error('the store ran no query');
    const plan = db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${settle.sql}`)
      .all(...settle.parameters)
      .map((row) => row.detail)
      .join('\n');
    expect(plan).toMatch(/SEARCH pipelines USING INDEX sqlite_autoindex_pipelines_1 \(id=\?\)/);
    expect(plan).toMatch(/SEARCH tasks USING (COVERING )?INDEX tasks_unfinished/);
    expect(plan).toMatch(/SEARCH tasks USING (COVERING )?INDEX tasks_by_pipeline \(pipeline_id=\?\)/);
    expect(plan).not.toMatch(/SCAN/);
  });
});
