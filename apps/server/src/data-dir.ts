import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_SEARCH_PATH, removeTreeSync, takeExclusiveLock } from '@pipewright/server';

const DATABASE_FILE = 'pipewright.db';
const SERVER_LOCK_FILE = 'server.lock';
const INSTANCE_FILE = 'instance';
/** Written by a stopping server: until when its stop may last, for a successor to wait. */
const STOPPING_FILE = 'server.stopping';
/** How long past the announced end of a stop a successor still waits, for a loaded machine. */
const STOP_OVERRUN_MS = 10_000;
const LOCK_POLL_MS = 100;

/** The program cannot start as asked; its message says why, for the person who started it. */
export class StartupError extends Error {}

/**
 * This server's name among the servers of its database: made at random by the first start on
 * the data directory, and kept there. A restart keeps it, and so ends at once what the previous
 * run left; another machine, with a data directory of its own, is another instance.
 */
export function instanceName(dataDir: string): string {
  const file = join(dataDir, INSTANCE_FILE);
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    const name = randomUUID();
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(`${file}.new`, `${name}\n`, { mode: 0o600 });
    renameSync(`${file}.new`, file);
    return name;
  }
}

/**
 * The database file of a data directory, private to the server's user: it holds every
 * organization's data and the hashes of API keys. The directory, made if needed, is too: no
 * one else may list or change it (others may enter it when the server's tasks run as users of
 * their own, see prepareWorkRoot; an admin command leaves that as it is). SQLite gives its
 * -wal and -shm files the mode of the database file.
 */
export function privateDatabaseFile(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, statSync(dataDir).mode & 0o711);
  const file = join(dataDir, DATABASE_FILE);
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
  return file;
}

/** The lock of a data directory's one server. */
export interface ServerLock {
  /**
   * Says that this server is stopping and will have stopped within `withinMs`: a server started
   * meanwhile on the directory waits for it (that long, and a margin) instead of refusing.
   */
  announceStop(withinMs: number): void;
  release(): void;
}

/**
 * Makes this process the one server of the data directory, or throws StartupError. Two
 * servers on one database would each take the other's running tasks for ones left by a
 * crash, and stop them. The lock is released when the process ends, however it ends.
 *
 * While the holder is stopping (it announced it), this waits for its end instead, calling
 * `onWait` first: a service manager or a person may start the next server as soon as they
 * asked the last one to stop, without racing against its stop deadline.
 */
export async function lockDataDir(dataDir: string, onWait?: (until: Date) => void): Promise<ServerLock> {
  // Made if need be, whichever the database: on PostgreSQL nothing else makes it first.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lockFile = join(dataDir, SERVER_LOCK_FILE);
  const stoppingFile = join(dataDir, STOPPING_FILE);
  let waitingFor: number | undefined;
  let lock = takeExclusiveLock(lockFile);
  while (!lock) {
    // Read again each time: the server waited for may be gone, and another have taken its place.
    const until = announcedStop(stoppingFile);
    if (until === undefined)
      throw new StartupError(`another pipewright-server is already serving ${dataDir}`);
    if (waitingFor !== until.getTime()) onWait?.(until);
    waitingFor = until.getTime();
    if (Date.now() > waitingFor + STOP_OVERRUN_MS) {
      throw new StartupError(
        `the pipewright-server stopping on ${dataDir} did not stop by ${until.toISOString()}`,
      );
    }
    await sleep(LOCK_POLL_MS);
    lock = takeExclusiveLock(lockFile);
  }
  // The announcement of the last server, stopped or crashed, is over.
  rmSync(stoppingFile, { force: true });
  const held = lock;
  return {
    announceStop(withinMs) {
      const until = new Date(Date.now() + withinMs).toISOString();
      // Written whole, then renamed into place: a successor never reads it half written.
      const written = `${stoppingFile}.${process.pid}`;
      writeFileSync(written, `${JSON.stringify({ pid: process.pid, until })}\n`, { mode: 0o600 });
      renameSync(written, stoppingFile);
    },
    release: () => held.release(),
  };
}

/** When the stop a server announced ends at the latest; undefined if none is announced. */
function announcedStop(file: string): Date | undefined {
  try {
    const { until } = JSON.parse(readFileSync(file, 'utf8')) as { until?: unknown };
    const date = new Date(typeof until === 'string' ? until : Number.NaN);
    return Number.isNaN(date.getTime()) ? undefined : date;
  } catch {
    return undefined;
  }
}

export interface WorkRoot {
  /** Where task attempts get their directories. */
  dir: string;
  /** The certificate tasks are told to trust, copied where they can read it. */
  caFile?: string | undefined;
}

/**
 * Where the runner makes each attempt's directory, emptied: what is there was left by a
 * crash, and the tasks it belonged to are retried afresh. The data directory's `work/`, unless
 * task users could not reach it there (a parent directory others may not enter, such as a
 * 0700 home): then a directory of the temp directory, named after the data directory.
 *
 * When tasks run as users of their own they must reach it (it becomes 0711: enterable, not
 * listable, and so does the data directory when it holds it; the files beside stay 0600), and
 * they get a copy of the server's self-signed certificate there, since `tls/` stays private.
 */
export function prepareWorkRoot(dataDir: string, forTaskUsers: boolean, selfSignedCert?: string): WorkRoot {
  const inside = !forTaskUsers || enterableByOthers(dirname(dataDir));
  const dir = inside ? join(dataDir, 'work') : outsideWorkRoot(dataDir);
  // With task users, a crashed server's tasks may still change the tree (they are swept later).
  removeTreeSync(dir, forTaskUsers);
  const mode = forTaskUsers ? 0o711 : 0o700;
  // Fails if someone made it again meanwhile: the server does not start on a directory it did not make.
  mkdirSync(dir, { mode });
  chmodSync(dir, mode);
  spreadSubdirectories(dir);
  if (inside) chmodSync(dataDir, mode);
  if (selfSignedCert === undefined) return { dir };
  const caFile = join(dir, 'ca.pem');
  copyFileSync(selfSignedCert, caFile);
  chmodSync(caFile, 0o644);
  return { dir, caFile };
}

/**
 * Marks the work root as the top of directory hierarchies (`chattr +T`, ext2/3/4), as /home
 * is meant to be: the allocator then spreads the attempt slots made in it over the file
 * system's block groups instead of packing them into the work root's. Each attempt makes and
 * removes entries in its slot, and without a journal ext4 keeps freed inodes unused for a
 * while: packed into one group, every new inode there was found by a scan past those freed
 * lately, about 8% of all the CPU of `npm run bench -- scheduler` (bench/README.md). Best
 * effort: on other file systems, or without chattr (e2fsprogs), nothing changes.
 */
function spreadSubdirectories(dir: string): void {
  try {
    execFileSync('chattr', ['+T', dir], { stdio: 'ignore', env: { PATH: DEFAULT_SEARCH_PATH } });
  } catch {
    // The slots go where the file system puts them.
  }
}

/**
 * Whether a user other than the owner may enter `path` and each directory above it (for a
 * file: run it).
 */
export function enterableByOthers(path: string): boolean {
  for (let current = resolve(path); ; current = dirname(current)) {
    if ((statSync(current).mode & 0o001) === 0) return false;
    if (current === dirname(current)) return true;
  }
}

function outsideWorkRoot(dataDir: string): string {
  const name = createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16);
  return join(tmpdir(), `pipewright-work-${name}`);
}
