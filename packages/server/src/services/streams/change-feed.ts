import type { Change, Store } from '../../store/index.js';

export type { Change } from '../../store/index.js';

/**
 * The committed changes of the whole database, in commit order, numbered by `seq` without gaps.
 * The streams of the API read it; they know nothing of where it comes from. Here it is the
 * change log that triggers fill (migration 013), whoever commits: this server or another.
 */
export interface ChangeFeed {
  /** The number of the latest change committed (0 before the first): a stream starts after it. */
  latest(): Promise<number>;
  /** The oldest number kept, undefined before the first: a resume from below it has lost changes. */
  oldest(): Promise<number | undefined>;
  /** Changes committed after `seq`, oldest first, at most `limit`: what a resuming stream catches up with. */
  read(after: number, limit: number): Promise<Change[]>;
  /**
   * Calls `listener` with every batch of changes committed from now on, in order, each once it is
   * done with the one before, until the returned function is called, or until the feed fails (the
   * database closed, say): then `failed` is called, and the subscription is over. `after` is the
   * latest change the subscriber knew of before it read anything itself: a feed that nobody
   * listened to starts after it, so that nothing committed while the subscriber got there is missed.
   */
  subscribe(
    listener: (changes: readonly Change[]) => Promise<void>,
    failed: (error: unknown) => void,
    after: number,
  ): () => void;
}

export interface PollingOptions {
  /** How often the database is checked for commits while anyone listens, told or not (default 100 ms). */
  intervalMs?: number | undefined;
  /** Most changes read at once (default 1,000). */
  batch?: number;
}

/**
 * Between two checks for commits nobody told of: every commit is told at once, unless the store
 * cannot tell (a watch the system refused, its inotify watches used up; an in-memory database).
 * Checks every few milliseconds would cost a core a few percent for as long as a stream is open.
 */
const CHECK_MS = 100;

/** After a commit told that does not show yet, the feed looks again this soon, then twice as late... */
const FIRST_RECHECK_MS = 1;
/** ...until it shows, or past this delay: ten looks within a second, for a commit slow to sync. */
const LAST_RECHECK_MS = 512;

/**
 * The change feed of one database. While someone listens, it looks whether anything was
 * committed, by any connection (the store's change stamp: on SQLite two pragma reads, a few
 * microseconds), and only then reads the log from where it is. It looks as soon as the store
 * tells of a commit (`onCommit`: whoever commits, a change reaches the streams at once), and every
 * `intervalMs` besides. Another process's commit may be told a moment before it shows (its last
 * frame is written before it is published), so a look told of a commit that finds nothing looks
 * again shortly, whatever `intervalMs`. Nobody listening, it costs nothing but the triggers' rows.
 */
export function createPollingChangeFeed(store: Store, options: PollingOptions = {}): ChangeFeed {
  const intervalMs = options.intervalMs ?? CHECK_MS;
  const batch = options.batch ?? 1000;
  const listeners = new Map<(changes: readonly Change[]) => Promise<void>, (error: unknown) => void>();
  let timer: NodeJS.Timeout | undefined;
  let woken: NodeJS.Immediate | undefined;
  let recheck: NodeJS.Timeout | undefined;
  // The delay of the next look for a commit told that did not show; 0 when none is awaited.
  let recheckMs = 0;
  let unwatch: (() => void) | undefined;
  let stamp = '';
  let position = 0;
  // Counts the starts of the feed: a look begun before the latest start reads for no one.
  let generation = 0;
  // A look is under way: the reads are awaited, and looks must not overlap.
  let looking = false;
  // A look was asked for while one was under way: it is made once that one ends.
  let again = false;

  const stop = () => {
    clearInterval(timer);
    clearImmediate(woken);
    clearTimeout(recheck);
    unwatch?.();
    timer = undefined;
    woken = undefined;
    recheck = undefined;
    recheckMs = 0;
    unwatch = undefined;
  };
  /** Reads what was committed since the last look, if anything: says whether anything was. */
  const read = async (started: number): Promise<boolean> => {
    const current = store.changeStamp();
    if (current === stamp) return false;
    stamp = current;
    recheckMs = 0;
    for (;;) {
      const changes = await store.changes.after(position, batch);
      const last = changes.at(-1);
      if (!last || generation !== started) return true;
      position = last.seq;
      for (const listener of listeners.keys()) await listener(changes);
      if (changes.length < batch || listeners.size === 0) return true;
    }
  };
  /** A commit was told and nothing showed: one more look soon, unless one is due already. */
  const lookAgain = () => {
    if (recheck || recheckMs === 0 || recheckMs > LAST_RECHECK_MS) return;
    recheck = setTimeout(() => {
      recheck = undefined;
      poll();
    }, recheckMs);
    recheck.unref();
    recheckMs *= 2;
  };
  const poll = () => {
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    const started = generation;
    read(started)
      .then((changed) => {
        if (!changed && generation === started) lookAgain();
      })
      .catch((error: unknown) => {
        // A look of a feed stopped since fails none of its new listeners: their own looks tell.
        if (generation !== started) return;
        const failed = [...listeners.values()];
        listeners.clear();
        stop();
        for (const fail of failed) fail(error);
      })
      .finally(() => {
        looking = false;
        if (!again) return;
        again = false;
        if (listeners.size > 0) poll();
      });
  };

  /** A commit was told: one look for all those told within a turn of the event loop. */
  const told = () => {
    if (listeners.size === 0) return;
    recheckMs = FIRST_RECHECK_MS;
    if (woken) return;
    woken = setImmediate(() => {
      woken = undefined;
      poll();
    });
  };

  return {
    latest: () => store.changes.latest(),
    oldest: () => store.changes.oldest(),
    read: (after, limit) => store.changes.after(after, limit),
    subscribe(listener, failed, after) {
      if (listeners.size === 0) {
        // From `after` on: whatever was committed before is for `read`. The first look reads the
        // log whatever the stamp, which may have moved since `after` was read.
        generation += 1;
        stamp = '';
        position = after;
        timer = setInterval(poll, intervalMs);
        timer.unref();
        unwatch = store.onCommit(told);
      }
      listeners.set(listener, failed);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) stop();
      };
    },
  };
}
