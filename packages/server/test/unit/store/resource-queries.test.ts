import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompiledQuery } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeKey } from '../../../src/domain/cursor.js';
import { openDatabase } from '../../../src/store/db.js';
import { sqlite } from '../../../src/store/dialect.js';
import { createResourceStore } from '../../../src/store/resources.store.js';
import type { Executor } from '../../../src/store/sql.js';

// Reads of resources go through what readers may see of them while an installation writes its
// own hidden (store/resources.store.ts): SQLite must still find the rows by the table's indexes,
// as a read of the table itself does, and look up an installation only for a row it marked.

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
const resources = createResourceStore(sqlite.q, recording);
type Resources = typeof resources;

/** A key of a page after (`i`, `n`): what a client sends for the next page. */
const after = (sort: 'id' | 'name') =>
  encodeKey(sort, { value: sort === 'id' ? 'i' : 'n', id: 'i', inclusive: false });

/** SQLite's plan of each query the store runs for a read, a line per step. */
async function plansOf(read: (store: Resources) => Promise<unknown>) {
  queries.length = 0;
  await read(resources);
  if (queries.length === 0) throw new Error('the store ran no query');
  return queries.map((query) =>
    db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${query.sql}`)
      .all(...query.parameters)
      .map((row) => row.detail),
  );
}

describe('the plan of reading resources as readers see them', () => {
  it.each([
    [
      'by id',
      (store: Resources) => store.get('p', 'i'),
      /SEARCH r USING INDEX resources_by_project_id \(project_id=\? AND id=\?\)/,
    ],
    [
      'by type and name',
      (store: Resources) => store.getByTypeAndName('p', 'task', 'n'),
      /SEARCH r USING INDEX sqlite_autoindex_resources_2 \(project_id=\? AND type=\? AND name=\?\)/,
    ],
    [
      'a page by id',
      (store: Resources) => store.installedPage('p', '', 100),
      /SEARCH r USING INDEX resources_by_project_id \(project_id=\? AND id>\?\)/,
    ],
    [
      'a page by name',
      (store: Resources) =>
        store.list('p', undefined, { size: 100, sort: 'name', order: 'asc', after: after('name') }),
      /SEARCH r USING INDEX resources_by_project_name \(project_id=\? AND \(name,id\)>\(\?,\?\)\)/,
    ],
    [
      'a page of a type by id',
      (store: Resources) =>
        store.list('p', 'task', { size: 100, sort: 'id', order: 'asc', after: after('id') }),
      /SEARCH r USING INDEX resources_by_project_type_id \(project_id=\? AND type=\? AND id>\?\)/,
    ],
  ])('finds them %s through the index, then the installation of each by its key', async (_, read, index) => {
    const [plan, ...others] = await plansOf(read);
    for (const steps of [plan ?? [], ...others]) {
      expect(steps[0], steps.join('\n')).toMatch(/^SEARCH r USING INDEX /);
      expect(steps[1], steps.join('\n')).toMatch(/SEARCH i USING INDEX .*\(id=\?\) LEFT-JOIN/);
      expect(steps.join('\n')).not.toMatch(/SCAN/);
    }
    expect(plan?.[0], plan?.join('\n')).toMatch(index);
  });
});
