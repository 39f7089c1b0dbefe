import { readdirSync, readFileSync } from 'node:fs';
import { readProcessFile } from './process-identity.js';
import { createReaper, type Reaper, reaperProblem } from './reaper.js';

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
 * Processes whose status the start's scan reads per turn of the event loop. Synchronous reads: a
 * read of /proc costs this thread a few microseconds, where a round trip through libuv's pool
 * (four per file) costs far more on a busy machine; the batches keep each turn short.
 */
const PROCESSES_PER_TURN = 64;
/** The start's scan gives up for now after this many rounds that still found processes. */
const MAX_SCAN_ROUNDS = 20;
/**
 * Users given back within this time are reaped together (one line to the reaper). Longer means
 * fewer, larger batches under load, and a finished task's leftover processes and its user kept
 * that much longer.
 */
const REAP_DELAY_MS = 100;
/** After the reaper failed, how long until it is asked again. */
const RETRY_DELAY_MS = 1000;

/**
 * Task users: each running task gets a user of its own from `range`, so that its processes
 * cannot read the server's files, nor signal, trace or read the environment (the task key) of
 * another task's processes.
 *
 * No process of a user outlives its task, nor meets the next task of that user: a user given
 * back is reaped (every process it has is killed, those that left the step's process group
 * included, see reaper.ts), and a user is handed out only once reaped since it last ran (or, for
 * its first task since the server started, since then: a previous server may have left
 * processes). Users are handed out round-robin over the whole range, so a user's leftover files
 * (in /tmp, say) meet a later task only after the range has wrapped.
 */
export function createTaskUsers(range: UidRange, options: TaskUsersOptions) {
  const { ahead, onReady = () => undefined, onReapFailed = () => undefined } = options;
  // The range's last user is the reaper's own (see reaper.ts): never handed out.
  const size = range.last - range.first;
  const reaper = createReaper(range.last);
  const inUse = new Set<number>();
  /** Reaped and not handed out since, in the order they are handed out. */
  const ready = new Set<number>();
  /** Given back, not reaped yet, with what resolves giveBack's promise. */
  const givenBack = new Map<number, () => void>();
  /** In the batch the reaper works on (one at a time). */
  const reaping = new Set<number>();
  let next = 0;
  let timer: NodeJS.Timeout | undefined;
  /** Not before this time (after a failure of the reaper). */
  let retryAt = 0;
  let failing = false;
  let closed = false;

  /** Up to `count` users to reap for the ready ones, the next in round-robin order that are idle. */
  const pickFresh = (count: number): number[] => {
    const picked: number[] = [];
    for (let tried = 0; tried < size && picked.length < count; tried += 1) {
      const uid = range.first + next;
      next = (next + 1) % size;
      if (inUse.has(uid) || ready.has(uid) || givenBack.has(uid) || reaping.has(uid)) continue;
      picked.push(uid);
    }
    return picked;
  };

  const reapBatch = async () => {
    timer = undefined;
    const back = [...givenBack];
    const fresh = pickFresh(ahead - ready.size);
    // Nothing to do (every user taken): the next give-back asks again.
    if (back.length === 0 && fresh.length === 0) return;
    givenBack.clear();
    const batch = [...back.map(([uid]) => uid), ...fresh];
    for (const uid of batch) reaping.add(uid);
    const failed = await reaper.reap(batch).then(
      (uids) => ({
        uids: new Set(uids),
        error: new Error(`the reaper could not reap users ${uids.join(' ')}`),
      }),
      (error: unknown) => ({ uids: new Set(batch), error }),
    );
    reaping.clear();
    // Closed meanwhile: the server stops, and what waits for a reap waits for the next start's.
    if (closed) return;
    for (const [uid, resolve] of back) {
      // Not reaped: waits for the next try, out of use.
      if (failed.uids.has(uid)) givenBack.set(uid, resolve);
      else resolve();
    }
    // Fresh users not reaped come round again later.
    for (const uid of fresh) if (!failed.uids.has(uid)) ready.add(uid);
    if (failed.uids.size < batch.length) onReady();
    if (failed.uids.size === 0) {
      failing = false;
    } else {
      if (!failing) onReapFailed(failed.error);
      failing = true;
      retryAt = Date.now() + RETRY_DELAY_MS;
    }
    plan();
  };

  /** Asks the reaper soon: at once when few users are ready, else gathering given-back users. */
  const plan = () => {
    if (reaping.size > 0 || closed) return;
    const short = ready.size < Math.ceil(ahead / 2);
    if (!short && givenBack.size === 0) return;
    const delay = Math.max(short ? 0 : REAP_DELAY_MS, retryAt - Date.now());
    if (timer && !short) return;
    clearTimeout(timer);
    timer = setTimeout(reapBatch, delay);
  };

  return {
    /** How many users take can hand out now. */
    get available(): number {
      return ready.size;
    },
    /** A user for a task starting now; throws when none is ready (see available). */
    take(): TaskUser {
      const [uid] = ready;
      if (uid === undefined) {
        plan();
        throw new Error('no task user is ready');
      }
      ready.delete(uid);
      inUse.add(uid);
      plan();
      return { uid, gid: uid };
    },
    /**
     * The task is over: its user's processes are killed soon, then the user can be handed out
     * again. Resolves once they are (never, after close).
     */
    giveBack(user: TaskUser): Promise<void> {
      inUse.delete(user.uid);
      const reaped = new Promise<void>((resolve) => givenBack.set(user.uid, resolve));
      plan();
      return reaped;
    },
    /**
     * Kills every process of the range now (at start: what a previous server left running), then
     * readies the first users. False when processes kept appearing (they are killed again later).
     */
    async sweepAll(): Promise<boolean> {
      const swept = await sweepUsers(range, reaper);
      plan();
      return swept;
    },
    /** Stops what is pending (the server stops; the next start sweeps everything). */
    close(): void {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      reaper.close();
    },
  };
}

export type TaskUsers = ReturnType<typeof createTaskUsers>;

export interface TaskUsersOptions {
  /** Users kept reaped and ready to hand out. */
  ahead: number;
  /** Users became ready: a task may have waited for one. */
  onReady?: () => void;
  /** The reaper failed, after working (or at first): users are not handed out until it works again. */
  onReapFailed?: (error: unknown) => void;
}

/**
 * Kills every process whose real user is in `range` (but the reaper's own, the last): scans
 * /proc for the users that have live processes and reaps them, until a scan finds none. True
 * when the last scan found none.
 * Processes that run a set-user-id program keep their real user, and a process that made itself
 * non-dumpable still shows its user in `status`. A user whose processes all escape a scan (a
 * fork chain may) is reaped anyway before its next task (see createTaskUsers).
 */
export async function sweepUsers(range: UidRange, reaper: Reaper): Promise<boolean> {
  for (let round = 0; round < MAX_SCAN_ROUNDS; round += 1) {
    const pids = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
    const found = new Set<number>();
    for (let next = 0; next < pids.length; next += PROCESSES_PER_TURN) {
      // A host may have thousands of processes: the event loop turns between batches.
      if (next > 0) await new Promise((resolve) => setImmediate(resolve));
      for (const pid of pids.slice(next, next + PROCESSES_PER_TURN)) {
        const uid = realUidOfLiveProcess(pid);
        if (uid !== undefined && uid >= range.first && uid < range.last) found.add(uid);
      }
    }
    if (found.size === 0) return true;
    const reaped = await reaper.reap([...found]).then(
      (failed) => failed.length === 0,
      () => false,
    );
    // Killed processes take a moment to become zombies, which the next scan skips.
    await new Promise((resolve) => setTimeout(resolve, reaped ? 10 : RETRY_DELAY_MS));
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
 * able to switch users, see every process in /proc, every uid of the range must be mapped in
 * its user namespace (containers often map only 0-65535), and the reaper must run.
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
  return reaperProblem();
}
