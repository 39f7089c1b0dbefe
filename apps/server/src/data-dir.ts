import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';

const DATABASE_FILE = 'pipewright.db';

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
