import { readdirSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';

export type Db = Database.Database;

const MIGRATIONS_DIR = new URL('./migrations/sqlite/', import.meta.url);

/**
 * How commits reach the disk. `full`: each commit is synced before it returns, so a write
 * the API acknowledges survives a power loss. `relaxed` (synchronous=NORMAL): commits reach
 * the OS, surviving a crash of the process, and the disk at the next synced commit or
 * checkpoint; for the scheduler's own bookkeeping, which a restart recovers anyway.
 */
export type Durability = 'full' | 'relaxed';

/**
 * A thread of the program's that checkpoints the write-ahead log (apps/server's
 * checkpointing.ts), as the stores see it.
 */
export interface BackgroundCheckpoints {
  /**
   * The pages the log held at the thread's last checkpoint, copied or not: a log is started
   * over only by a write that begins once it is all copied.
   */
  logPages(): number;
  /** Resolves once the thread has checkpointed, asked now; at once if there is no thread. */
  catchUp(): Promise<void>;
}

/**
 * Who copies the write-ahead log into the database file. `auto`: the connection whose commit
 * takes the log past 1,000 pages (4 MiB) does it, on its own thread. Background checkpoints:
 * a thread of the program's does, so that no commit of the API's thread holds it for the copy
 * and its sync to disk; a transaction waits for that thread when the log is long (see
 * store/index.ts), and a connection checkpoints by itself only past 10,000 pages (40 MiB),
 * should the thread be gone.
 */
export type Checkpoints = 'auto' | BackgroundCheckpoints;

/** Pages of write-ahead log past which a connection with background checkpoints checkpoints by itself. */
const BACKGROUND_SAFETY_PAGES = 10_000;

/**
 * Opens (creating if needed) the SQLite database and brings its schema up to date.
 * WAL lets readers run beside the writer.
 */
export function openDatabase(
  file: string,
  durability: Durability = 'full',
  checkpoints: Checkpoints = 'auto',
): Db {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(durability === 'full' ? 'synchronous = FULL' : 'synchronous = NORMAL');
  if (checkpoints !== 'auto') db.pragma(`wal_autocheckpoint = ${BACKGROUND_SAFETY_PAGES}`);
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
