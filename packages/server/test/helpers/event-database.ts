import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { openDatabase } from '../../src/store/db.js';
import { createStore } from '../../src/store/index.js';

/** An event of project `p`, its id the one parameter. */
export const INSERT_EVENT = `INSERT INTO events (id, org_id, project_id, creation_time, event_time, connector, name, data)
  VALUES (?, 'o', 'p', 't', 't', 'custom', 'push', '{}')`;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A SQLite database file of its own (removed after the test) with organization `o` and its
 * project `p`, the store over it, and a way to commit an event of `p` through its connection: a
 * change that the change log records, for unit tests of what reads it; and a way to close it.
 */
export function eventDatabase() {
  const dir = mkdtempSync(join(tmpdir(), 'event-database-'));
  dirs.push(dir);
  const file = join(dir, 'db.sqlite');
  const db = openDatabase(file);
  db.exec(`INSERT INTO organizations (id, name, creation_time) VALUES ('o', 'o', 't');
           INSERT INTO projects (id, org_id, name) VALUES ('p', 'o', 'p')`);
  const insert = db.prepare<[string]>(INSERT_EVENT);
  return {
    file,
    store: createStore(db),
    insertEvent: (id: string): void => void insert.run(id),
    close: (): void => void db.close(),
  };
}
