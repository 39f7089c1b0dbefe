import { closeSync, fsyncSync, linkSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { newSecretKeyText, parseSecretKey } from '@pipewright/server';
import { StartupError } from './data-dir.js';

/** Where the key is kept when the operator gives none: in the data directory, beside the database. */
const DEFAULT_FILE = 'identity.key';

/** The key that encrypts identities, and the file it was read from. */
export interface IdentityKey {
  key: Buffer;
  file: string;
}

/**
 * The key that encrypts the identities of projects, never stored in the database: the file the
 * operator gives, or `DIR/identity.key`, made with a random key at the first start. A file that
 * other users may read or change, or that holds no key, refuses the start: identities stored
 * under a key that was read by others are no secret.
 */
export function loadIdentityKey(dataDir: string, given: string | undefined): IdentityKey {
  const file = given ?? join(dataDir, DEFAULT_FILE);
  if (given === undefined) makeKeyFile(file);
  let mode: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw new Error('not a file');
    mode = stat.mode & 0o777;
  } catch (error) {
    throw new StartupError(`cannot read the identity key ${file}: ${(error as Error).message}`);
  }
  if ((mode & 0o077) !== 0) {
    throw new StartupError(
      `the identity key ${file} may be read or changed by other users (mode ${mode.toString(8)}): make it private with chmod 600`,
    );
  }
  try {
    return { key: parseSecretKey(readFileSync(file, 'utf8')), file };
  } catch (error) {
    throw new StartupError(`the identity key ${file} holds no key: ${(error as Error).message}`);
  }
}

/**
 * Makes the key file unless it exists: written whole and synced under another name, then linked
 * into place, so that a crash never leaves a key file half written (and the key of identities lost).
 */
function makeKeyFile(file: string): void {
  const written = `${file}.${process.pid}`;
  const fd = openSync(written, 'w', 0o600);
  try {
    writeSync(fd, newSecretKeyText());
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(written, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(written, { force: true });
  }
}
