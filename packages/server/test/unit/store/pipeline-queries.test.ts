import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { PageRequest } from '../../../src/domain/cursor.js';
import { openDatabase } from '../../../src/store/db.js';
import { createPipelineStore, type PipelineFilters } from '../../../src/store/pipelines.store.js';

// Every filter of GET /pipelines reads through an index (migration 016): a list of 10,000
// pipelines narrowed to a few must not scan the project's pipelines.

const dir = mkdtempSync(join(tmpdir(), 'pipewright-plans-'));
const db = openDatabase(join(dir, 'pipewright.db'));
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const pipelines = createPipelineStore(db);
const ID = '2Fv9zQx0bY3kLmN8pQrStUvWxYz';
const TIME = '2026-11-22T10:00:00.000Z';

/** SQLite's plan of the page query the store runs for these filters and sort. */
function planOf(filters: PipelineFilters, sort: PageRequest['sort'], order: PageRequest['order'] = 'desc') {
  const prepare = vi.spyOn(db, 'prepare');
  try {
    pipelines.list(ID, filters, { size: 20, sort, order });
    const page = prepare.mock.calls.map(([sql]) => sql).find((sql) => /ORDER BY .* LIMIT \?$/s.test(sql));
    if (!page) throw new Error('the store ran no page query');
    const holders = page.match(/\?/g)?.length ?? 0;
    return db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${page}`)
      .all(...Array.from({ length: holders - 1 }, () => TIME), 21)
      .map((row) => row.detail);
  } finally {
    prepare.mockRestore();
  }
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
  ])('reads by %s through its index, sorted by creation_time without sorting', (_name, filters, index) => {
    const plan = planOf(filters, 'creation_time');
    expect(plan.join('\n')).toMatch(index);
    expect(plan.join('\n')).not.toMatch(/SCAN|TEMP B-TREE/);
  });

  it.each([
    ['name', { name: 'deploy' }],
    ['trigger_id', { triggerId: ID }],
    ['command_id', { commandId: ID }],
  ])('reads by %s through its index under the other sorts too', (_name, filters) => {
    for (const sort of ['id', 'event_time']) {
      const plan = planOf(filters, sort);
      expect(plan.join('\n'), sort).toMatch(
        /SEARCH pipelines USING INDEX pipelines_by_project_(name|trigger|command)/,
      );
      expect(plan.join('\n'), sort).not.toMatch(/SCAN/);
    }
  });
});
