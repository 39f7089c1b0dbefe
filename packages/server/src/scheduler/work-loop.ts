import type { Logger } from '../logger.js';

export interface WorkLoopOptions {
  /** Does the work there is now; rejects when it cannot (the loop backs off, then tries again). */
  pass(): Promise<void>;
  /** When the earliest work waiting for its time is due (an ISO time), if any: a pass runs then. */
  nextDueTime(): Promise<string | undefined>;
  clock(): Date;
  /** Safety net: a pass this often even without a wake-up. */
  pollIntervalMs: number;
  logger: Logger;
}

/**
 * The scheduler's loop: a pass on the next turn of the event loop after a wake-up, however many
 * wake-ups came meanwhile, and never two at once (a wake-up during a pass brings one more after
 * it); after each pass, a wake-up when the earliest work waiting for its time (a retry) becomes
 * due; and a pass every pollIntervalMs in any case. After a pass that failed it backs off (up to
 * 10 s) rather than spin on a broken database. When the earliest work is due is read again only
 * when it may have changed (dueTimeChanged, the poll, the due time reached, the start): a pass
 * runs after every commit that may bring work, and a read at each would cost one for nothing.
 */
export function createWorkLoop(options: WorkLoopOptions) {
  const { pass, nextDueTime, clock, pollIntervalMs, logger } = options;
  let started = false;
  let stopped = false;
  let queued = false;
  let passing = false;
  let failures = 0;
  // Whether the due time may have changed since it was last read.
  let dueUnknown = true;
  let dueTimer: NodeJS.Timeout | undefined;
  let pollTimer: NodeJS.Timeout | undefined;

  const run = async () => {
    queued = false;
    if (stopped) return;
    passing = true;
    try {
      await pass();
      failures = 0;
      if (dueUnknown) await armDueTimer();
    } catch (error) {
      failures += 1;
      logger.error('scheduler failed to claim work', { error: String(error) });
      setTimeout(wakeUp, Math.min(10_000, 100 * 2 ** failures)).unref();
    } finally {
      passing = false;
      // Woken during the pass: what woke it may have come too late for it.
      if (queued) setImmediate(run);
    }
  };

  const wakeUp = () => {
    if (!started || stopped || queued) return;
    queued = true;
    if (!passing) setImmediate(run);
  };

  /** Work waiting for its time may be due at another time (a retry scheduled, or due now): a pass reads it again. */
  const dueTimeChanged = () => {
    dueUnknown = true;
    wakeUp();
  };

  const armDueTimer = async () => {
    // Before the read: a change while it is under way asks for another.
    dueUnknown = false;
    const due = await nextDueTime();
    if (dueTimer) clearTimeout(dueTimer);
    dueTimer = undefined;
    if (!due) return;
    const delay = Math.max(0, Date.parse(due) - clock().getTime());
    dueTimer = setTimeout(dueTimeChanged, Math.min(delay, 2 ** 31 - 1));
    dueTimer.unref();
  };

  return {
    /** New work may exist: a pass runs soon. Nothing before start, nor after stop. */
    wakeUp,
    dueTimeChanged,
    /** Whether stop was called. */
    get stopped(): boolean {
      return stopped;
    },
    /** Runs a first pass, and passes from now on (unless stopped meanwhile). */
    start(): void {
      if (stopped) return;
      started = true;
      // The poll reads the due time again too: what other servers scheduled.
      pollTimer = setInterval(dueTimeChanged, pollIntervalMs);
      pollTimer.unref();
      wakeUp();
    },
    /** No pass any more. */
    stop(): void {
      stopped = true;
      clearTimeout(dueTimer);
      clearInterval(pollTimer);
    },
  };
}

export type WorkLoop = ReturnType<typeof createWorkLoop>;
