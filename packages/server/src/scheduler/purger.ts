import { setTimeout as sleep } from 'node:timers/promises';
import { formatTime } from '../domain/time.js';
import type { BatchResult, Cutoffs, Store, Tables } from '../store/index.js';
import { batchSizer } from './batch-sizer.js';

/** How long what grows without bound is kept, in days; undefined keeps it forever. */
export interface RetentionOptions {
  /** Finished pipelines without a `retention` of their own (default: forever, as the spec says). */
  pipelineDays?: number | undefined;
  /** The step output of finished pipelines without a `retention` of their own. */
  stepOutputDays?: number | undefined;
  /** Events and their command executions; longer while a pipeline they made is left. */
  eventDays?: number | undefined;
}

export interface PurgerOptions extends RetentionOptions {
  /**
   * How long the deletions of one batch should take (default 2 ms): the batch size follows what
   * the last batches took. A batch holds the database's write lock that long, and its commit.
   */
  batchMs?: number;
  /**
   * Rest after each batch, and at least as long as the batch took (default 5 ms). A write of
   * another connection that finds the database locked retries 1, 3 and 8 ms later (SQLite's busy
   * handler): with batches of about 2 ms and their commit, it gets in within 8 ms.
   */
  restMs?: number;
  /**
   * Changes the change log keeps (default 100,000): the streams resume from any of them. Every
   * pass trims the log to that; the log alone starts a pass once it holds half as many again.
   */
  changeLogRows?: number;
}

/** What one pass deleted. */
export interface PurgeCounts {
  pipelines: number;
  /** Pipelines whose step output was emptied. */
  step_outputs: number;
  events: number;
  command_executions: number;
  /** Rows of the change log, beyond the streams' window of resume. */
  changes: number;
}

const MS_PER_DAY = 86_400_000;
/** The changes the change log keeps by default (the streams' window of resume, migration 013). */
const CHANGE_LOG_ROWS = 100_000;
/**
 * Deletes what retention says has expired (store/retention.store.ts): finished pipelines past
 * their own retention or the server's, step output past the server's, events and command
 * executions past theirs. Each batch is one short transaction, so a crash loses at most the
 * batch under way. After each batch the purger rests (`restMs`): other connections' writes get
 * the database between batches. The program runs passes on a thread of their own, with a
 * connection of their own, so that no batch holds up a request; tests run them on a fake clock.
 */
export function createPurger(
  store: Store,
  options: PurgerOptions = {},
  clock: () => Date = () => new Date(),
) {
  const budgetMs = options.batchMs ?? 2;
  const restMs = options.restMs ?? 5;
  const sizers = {
    expired: batchSizer(budgetMs),
    ended: batchSizer(budgetMs),
    output: batchSizer(budgetMs),
    events: batchSizer(budgetMs),
    changes: batchSizer(budgetMs),
  };
  let stopped = false;
  let pass: Promise<PurgeCounts> | undefined;

  const cutoff = (now: Date, days: number | undefined) =>
    days === undefined ? undefined : formatTime(new Date(now.getTime() - days * MS_PER_DAY));
  const cutoffsAt = (now: Date): Cutoffs => ({
    now: formatTime(now),
    pipelines: cutoff(now, options.pipelineDays),
    stepOutput: cutoff(now, options.stepOutputDays),
    events: cutoff(now, options.eventDays),
  });

  const changeLogRows = options.changeLogRows ?? CHANGE_LOG_ROWS;
  const deleteChanges = async (tx: Tables, limit: number): Promise<BatchResult & { changes: number }> => {
    const changes = await tx.changes.deleteBeyond(changeLogRows, limit);
    return { scanned: changes, pipelines: 0, stepOutputs: 0, events: 0, commandExecutions: 0, changes };
  };

  /** Runs batches until one comes back short of its size (or the purger stops), adding up what they deleted. */
  const drain = async (
    sizer: ReturnType<typeof batchSizer>,
    batch: (tx: Tables, limit: number) => Promise<BatchResult & { changes?: number }>,
    counts: PurgeCounts,
  ) => {
    while (!stopped) {
      const limit = sizer.size;
      const began = performance.now();
      let deletionsMs = 0;
      const result = await store.transaction(async (tx) => {
        // Timed from the transaction's start: the wait for the write lock, which other writers
        // hold as long as they like, is no cost of the batch's size.
        const started = performance.now();
        const done = await batch(tx, limit);
        deletionsMs = performance.now() - started;
        return done;
      });
      counts.pipelines += result.pipelines;
      counts.step_outputs += result.stepOutputs;
      counts.events += result.events;
      counts.command_executions += result.commandExecutions;
      counts.changes += result.changes ?? 0;
      if (result.scanned < limit) return;
      sizer.took(deletionsMs);
      await sleep(Math.max(restMs, performance.now() - began));
    }
  };

  const run = async (): Promise<PurgeCounts> => {
    const cutoffs = cutoffsAt(clock());
    const counts: PurgeCounts = {
      pipelines: 0,
      step_outputs: 0,
      events: 0,
      command_executions: 0,
      changes: 0,
    };
    if (await store.retention.anyExpired(cutoffs)) {
      await drain(sizers.expired, (tx, limit) => tx.retention.deleteExpiredPipelines(cutoffs, limit), counts);
      await drain(
        sizers.ended,
        (tx, limit) => tx.retention.deletePipelinesEndedBefore(cutoffs, limit),
        counts,
      );
      await drain(sizers.output, (tx, limit) => tx.retention.deleteStepOutput(cutoffs, limit), counts);
      await drain(sizers.events, (tx, limit) => tx.retention.deleteEvents(cutoffs, limit), counts);
    }
    await drain(sizers.changes, deleteChanges, counts);
    return counts;
  };

  return {
    /**
     * Whether a pass now would find anything expired: a few lookups through indexes, cheap
     * enough for the event loop's thread, which then starts a pass elsewhere only when needed.
     */
    async hasWork(): Promise<boolean> {
      // The change log alone starts a pass once half as many again are kept, so that a pass
      // deletes many at once.
      return (
        (await store.retention.anyExpired(cutoffsAt(clock()))) ||
        (await store.changes.beyond(changeLogRows)) > changeLogRows / 2
      );
    },
    /** One pass over everything expired at the clock's time; a pass under way is waited for first. */
    async purgeOnce(): Promise<PurgeCounts> {
      while (pass) await pass.catch(() => undefined);
      pass = run();
      try {
        return await pass;
      } finally {
        pass = undefined;
      }
    },
    /** Ends the pass under way after its current batch (none runs between turns of the event loop), and waits for it. */
    async stop(): Promise<void> {
      stopped = true;
      await pass?.catch(() => undefined);
    },
  };
}

export type Purger = ReturnType<typeof createPurger>;
