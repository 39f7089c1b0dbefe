import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { type ExclusiveLock, takeExclusiveLock } from '@pipewright/server';

const DATABASE_FILE = 'pipewright.db';
const SERVER_LOCK_FILE = 'server.lock';

/** The program cannot start as asked; its message says why, for the person who started it. */
export class StartupError extends Error {}

/**
 * The database file of a data directory, private to the server's user: it holds every
 * organization's data and the hashes of API keys. The directory, made if needed, is too.
 * SQLite gives its -wal and -shm files the mode of the database file.
 */
export function privateDatabaseFile(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const file = join(dataDir, DATABASE_FILE);
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
  return file;
}

/**
 * Makes this process the one server of the data directory, or throws StartupError. Two
 * servers on one database would each take the other's running tasks for ones left by a
 * crash, and stop them. The lock is released when the process ends, however it ends.
 */
export function lockDataDir(dataDir: string): ExclusiveLock {
  const file = join(dataDir, SERVER_LOCK_FILE);
  closeSync(openSync(file, 'a', 0o600));
  const lock = takeExclusiveLock(file);
  if (!lock) throw new StartupError(`another pipewright-server is already serving ${dataDir}`);
  return lock;
}
