import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Request } from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { toApiError } from '../../src/http/errors.js';

// Storage that cannot take a write (read-only, full, failing, locked elsewhere) is the
// server's condition, not a bug: 503 service_unavailable, retry later; SQLite rolled the
// write back. Real errors of better-sqlite3, made on a scratch database. The program's
// own test (apps/server/test/faults.test.ts) fills the storage of the real server.

const dir = mkdtempSync(join(tmpdir(), 'pipewright-storage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let count = 0;
function database(): { file: string; db: Database.Database } {
  count += 1;
  const file = join(dir, `${count}.db`);
  const db = new Database(file);
  db.exec('CREATE TABLE t (v TEXT UNIQUE)');
  return { file, db };
}

/** The error `write` throws. */
function errorOf(write: () => unknown): unknown {
  try {
    write();
  } catch (error) {
    return error;
  }
  throw new Error('the write did not fail');
}

const request = { method: 'PUT', path: '/v0/anything' } as Request;

const FAILURES: [string, () => unknown][] = [
  [
    'a read-only database',
    () => {
      const { file, db } = database();
      db.close();
      return errorOf(() => new Database(file, { readonly: true }).exec("INSERT INTO t VALUES ('x')"));
    },
  ],
  [
    'a full database',
    () => {
      const { db } = database();
      db.pragma('max_page_count = 3');
      return errorOf(() => db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(100_000)));
    },
  ],
  [
    'a lock held elsewhere',
    () => {
      const { file, db } = database();
      db.exec('BEGIN IMMEDIATE');
      return errorOf(() => new Database(file, { timeout: 0 }).exec("INSERT INTO t VALUES ('x')"));
    },
  ],
  ['a failing disk', () => new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE')],
];

describe('storage errors', () => {
  it.each(FAILURES)('answers %s with 503 service_unavailable', (_case, make) => {
    const error = make();
    expect((error as { code: string }).code).toMatch(/^SQLITE_(READONLY|FULL|BUSY|IOERR)/);
    const mapped = toApiError(error, request);
    expect(mapped.status).toBe(503);
    expect(mapped.body).toEqual({ code: 'service_unavailable', error: expect.any(String) });
  });

  it('still answers other database errors with 500 internal_error, without details', () => {
    const { db } = database();
    db.exec("INSERT INTO t VALUES ('x')");
    const error = errorOf(() => db.exec("INSERT INTO t VALUES ('x')"));
    expect((error as { code: string }).code).toBe('SQLITE_CONSTRAINT_UNIQUE');
    expect(toApiError(error, request)).toMatchObject({
      status: 500,
      body: { code: 'internal_error', error: 'internal error' },
    });
  });
});
