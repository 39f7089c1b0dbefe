import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/db.js';
import { VISIBLE_RESOURCES } from '../../../src/store/resources.store.js';

// Reads of resources go through what readers may see of them while an installation writes its
// own hidden (store/resources.store.ts): SQLite must still find the rows by the table's indexes,
// as a read of the table itself does, and look up an installation only for a row it marked.

const dir = mkdtempSync(join(tmpdir(), 'pipewright-plans-'));
const db = openDatabase(join(dir, 'pipewright.db'));
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** SQLite's plan of a read of the visible resources, a line per step. */
const planOf = (where: string, ...parameters: unknown[]) =>
  db
    .prepare<unknown[], { detail: string }>(
      `EXPLAIN QUERY PLAN SELECT * FROM ${VISIBLE_RESOURCES} AS resources ${where}`,
    )
    .all(...parameters)
    .map((row) => row.detail);

describe('the plan of reading resources as readers see them', () => {
  it.each([
    [
      'by id',
      'WHERE project_id = ? AND id = ?',
      ['p', 'i'],
      /SEARCH r USING INDEX resources_by_project_id \(project_id=\? AND id=\?\)/,
    ],
    [
      'by type and name',
      'WHERE project_id = ? AND type = ? AND name = ?',
      ['p', 'task', 'n'],
      /SEARCH r USING INDEX sqlite_autoindex_resources_2 \(project_id=\? AND type=\? AND name=\?\)/,
    ],
    [
      'a page by id',
      'WHERE project_id = ? AND id > ? ORDER BY id LIMIT ?',
      ['p', '', 100],
      /SEARCH r USING INDEX resources_by_project_id \(project_id=\? AND id>\?\)/,
    ],
    [
      'a page by name',
      'WHERE project_id = ? AND (name, id) > (?, ?) ORDER BY name, id LIMIT ?',
      ['p', 'n', 'i', 100],
      /SEARCH r USING INDEX resources_by_project_name \(project_id=\? AND \(name,id\)>\(\?,\?\)\)/,
    ],
    [
      'a page of a type by id',
      'WHERE project_id = ? AND type = ? AND id > ? ORDER BY id LIMIT ?',
      ['p', 'task', '', 100],
      /SEARCH r USING INDEX resources_by_project_type_id \(project_id=\? AND type=\? AND id>\?\)/,
    ],
  ])(
    'finds them %s through the index, then the installation of each by its key',
    (_, where, parameters, index) => {
      const plan = planOf(where, ...parameters);
      expect(plan[0], plan.join('\n')).toMatch(index);
      expect(plan[1], plan.join('\n')).toMatch(/SEARCH i USING INDEX .*\(id=\?\) LEFT-JOIN/);
      expect(plan.join('\n')).not.toMatch(/SCAN/);
    },
  );
});
