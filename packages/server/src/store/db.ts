import { readdirSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';

export type Db = Database.Database;

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/**
 * How commits reach the disk. `full`: each commit is synced before it returns, so a write
 * the API acknowledges survives a power loss. `relaxed` (synchronous=NORMAL): commits reach
 * the OS, surviving a crash of the process, and the disk at the next synced commit or
 * checkpoint; for the scheduler's own bookkeeping, which a restart recovers anyway.
 */
export type Durability = 'full' | 'relaxed';

/**
 * Opens (creating if needed) the SQLite database and brings its schema up to date.
 * WAL lets readers run beside the writer.
 */
export function openDatabase(file: string, durability: Durability = 'full'): Db {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(durability === 'full' ? 'synchronous = FULL' : 'synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // Another process's write (an admin command) is waited for this long; past it the
  // request gets 503. The wait blocks the server's one thread, so it is kept short.
  db.pragma('busy_timeout = 1000');
  migrate(db);
  return db;
}

/** Applies the numbered `NNN_name.sql` files above `PRAGMA user_version`, each atomically. */
export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((name) => /^\d{3}_[a-z0-9_]+\.sql$/.test(name))
    .sort();
  for (const name of files) {
    const version = Number(name.slice(0, 3));
    if (version <= current) continue;
    const sql = readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8');
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${version}`);
    }).immediate();
  }
}
