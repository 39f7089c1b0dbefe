import { closeSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';

export interface ExclusiveLock {
  release(): void;
}

/**
 * Takes the exclusive lock of `file` (an SQLite file used only as a lock), or returns
 * undefined at once when another connection, in this process or another, holds it. The
 * operating system releases it when the holder dies, so a crash leaves no stale lock. The
 * file is made if needed, readable by its owner only.
 */
export function takeExclusiveLock(file: string): ExclusiveLock | undefined {
  closeSync(openSync(file, 'a', 0o600));
  const db = new Database(file, { timeout: 0 });
  try {
    // In exclusive locking mode the lock a transaction takes is kept after it ends.
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return undefined;
    throw error;
  }
  return { release: () => db.close() };
}
