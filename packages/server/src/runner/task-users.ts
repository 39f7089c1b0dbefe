import { readdirSync, readFileSync } from 'node:fs';
import { readProcessFile } from './process-identity.js';

/** A range of numeric user ids, both ends included, that no account of the host uses. */
export interface UidRange {
  first: number;
  last: number;
}

/** The user and group a task's processes run as: the same number for both. */
export interface TaskUser {
  uid: number;
  gid: number;
}

/**
 * Processes whose status a sweep reads per turn of the event loop. Synchronous reads: a read of
 * /proc costs this thread a few microseconds, where a round trip through libuv's pool (four per
 * file) costs far more on a busy machine; the batches keep each turn short.
 */
const PROCESSES_PER_TURN = 64;
/** A sweep gives up for now after this many rounds that still found processes (a fork bomb). */
const MAX_SWEEP_ROUNDS = 20;
/**
 * Users given back within this time are swept together: one scan of /proc for all of them (a
 * read of each process's status). Longer means fewer scans under load, and a finished task's
 * leftover processes and its user kept that much longer.
 */
const SWEEP_DELAY_MS = 100;

/**
 * Task users: each running task gets a user of its own from `range`, so that its processes
 * cannot read the server's files, nor signal, trace or read the environment (the task key)
 * of another task's processes.
 *
 * A user given back is swept before it is handed out again: every process of that user is
 * killed, those that left the step's process group (setsid, daemons) included, which a
 * process-group kill misses. Users are handed out round-robin over the whole range, so a
 * user's leftover files (in /tmp, say) meet a later task only after the range has wrapped.
 */
export function createTaskUsers(range: UidRange, onSwept: () => void = () => undefined) {
  const size = range.last - range.first + 1;
  const inUse = new Set<number>();
  /** Given back, not yet swept (not handed out), with what resolves giveBack's promise. */
  const unswept = new Map<number, () => void>();
  let next = 0;
  let sweepTimer: NodeJS.Timeout | undefined;

  let sweeping = false;
  let closed = false;
  const sweepGivenBack = async () => {
    sweepTimer = undefined;
    sweeping = true;
    // Users given back during the sweep are in the next one: their processes may outlive this scan.
    const swept = [...unswept];
    const done = await sweepUsers(range, inUse).catch(() => false);
    sweeping = false;
    // Closed meanwhile: the server stops, and what waits for a sweep waits for the next start's.
    if (closed) return;
    if (done) {
      for (const [uid, resolve] of swept) {
        unswept.delete(uid);
        resolve();
      }
      onSwept();
    }
    // Processes still appearing (or /proc failing): again later, the users stay out of use meanwhile.
    if (unswept.size > 0) scheduleSweep(done ? SWEEP_DELAY_MS : 1000);
  };
  const scheduleSweep = (delayMs: number) => {
    if (sweeping || closed) return;
    sweepTimer ??= setTimeout(sweepGivenBack, delayMs);
  };

  return {
    /** A user for a task starting now; throws when every user of the range is taken. */
    take(): TaskUser {
      for (let tried = 0; tried < size; tried += 1) {
        const uid = range.first + next;
        next = (next + 1) % size;
        if (inUse.has(uid) || unswept.has(uid)) continue;
        inUse.add(uid);
        return { uid, gid: uid };
      }
      throw new Error(`all ${size} task users are in use`);
    },
    /**
     * The task is over: its user's processes are killed soon, then the user can be handed out
     * again. Resolves once none is left (never, after close).
     */
    giveBack(user: TaskUser): Promise<void> {
      inUse.delete(user.uid);
      const swept = new Promise<void>((resolve) => unswept.set(user.uid, resolve));
      scheduleSweep(SWEEP_DELAY_MS);
      return swept;
    },
    /** Kills every process of the range now (at start: what a previous server left running). */
    sweepAll(): Promise<boolean> {
      return sweepUsers(range, inUse);
    },
    /** Stops the pending sweep (the server stops; the next start sweeps everything). */
    close(): void {
      closed = true;
      clearTimeout(sweepTimer);
      sweepTimer = undefined;
    },
  };
}

export type TaskUsers = ReturnType<typeof createTaskUsers>;

/**
 * Kills every live process whose real user is in `range` but not in `spared`, scanning /proc
 * again until a scan finds none (a process may fork between a scan and its kill). True when
 * the last scan found none. Processes that run a set-user-id program keep their real user,
 * and a process that made itself non-dumpable still shows its user in `status`.
 */
export async function sweepUsers(range: UidRange, spared: ReadonlySet<number>): Promise<boolean> {
  for (let round = 0; round < MAX_SWEEP_ROUNDS; round += 1) {
    const pids = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
    let found = 0;
    for (let next = 0; next < pids.length; next += PROCESSES_PER_TURN) {
      // A host may have thousands of processes: the event loop turns between batches.
      if (next > 0) await new Promise((resolve) => setImmediate(resolve));
      for (const pid of pids.slice(next, next + PROCESSES_PER_TURN)) {
        const uid = realUidOfLiveProcess(pid);
        if (uid === undefined || uid < range.first || uid > range.last || spared.has(uid)) continue;
        found += 1;
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // It exited meanwhile.
        }
      }
    }
    if (found === 0) return true;
  }
  return false;
}

/**
 * The real uid of a process, undefined when it is gone or a zombie (killing it again does nothing).
 * A process whose main thread alone has exited shows as a zombie too, but its other threads run
 * on (and a SIGKILL ends them): it counts as live.
 */
function realUidOfLiveProcess(pid: number): number | undefined {
  const status = readProcessFile(pid, 'status');
  if (status === undefined) return undefined;
  const threads = Number(/^Threads:\s*(\d+)/m.exec(status)?.[1] ?? 1);
  if (/^State:\s*[ZX]/m.test(status) && threads <= 1) return undefined;
  const uid = /^Uid:\s*(\d+)/m.exec(status)?.[1];
  return uid === undefined ? undefined : Number(uid);
}

/**
 * Why task users cannot work on this host, or undefined when they can: the server must be
 * able to switch users, see every process in /proc, and every uid of the range must be
 * mapped in its user namespace (containers often map only 0-65535).
 */
export function taskUsersProblem(range: UidRange): string | undefined {
  if (process.getuid?.() !== 0) return 'the server does not run as root, which switching users needs';
  let uidMap: string;
  try {
    uidMap = readFileSync('/proc/self/uid_map', 'utf8');
  } catch {
    return '/proc is not mounted, and finding the processes of a task needs it';
  }
  const mapped = uidMap
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number))
    .some(([inside = 0, , count = 0]) => range.first >= inside && range.last < inside + count);
  if (!mapped) return `user ids ${range.first}-${range.last} are not all mapped in this user namespace`;
  return undefined;
}
