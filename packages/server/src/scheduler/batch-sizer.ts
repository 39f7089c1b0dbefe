const FIRST_BATCH = 16;
const LARGEST_BATCH = 2000;

/** How much each new measurement weighs in the running estimates (an exponential moving average). */
const WEIGHT = 0.3;

/**
 * A batch size that follows a time budget: rows deleted per batch vary (a pipeline takes its
 * tasks, steps and output along), so the size follows how long the deletions of the last full
 * batches took (not their commit, which now and then includes a checkpoint of the WAL), at most
 * doubling at a time.
 *
 * The budget is for the rows, past what any batch costs whatever its size: on PostgreSQL each
 * statement is a round trip, and a batch of one row took more than the 2 ms a SQLite batch is
 * given, which shrank every batch to one row. That fixed cost is learned from batches of one
 * row, and from any batch quicker than it (one batch of one row slowed by cold caches would
 * otherwise make every later batch too large).
 *
 * Both costs are running averages, not the last measurement: timed on a busy machine (the purge
 * runs at a low priority), one batch's time varies by as much as the budget, and sizes that
 * followed each measurement shrank to one row and stayed there (212 pipelines a second on
 * PostgreSQL, bench/README.md, purge).
 */
export function batchSizer(budgetMs: number) {
  let size = FIRST_BATCH;
  let fixedMs: number | undefined;
  let rowMs: number | undefined;
  const average = (previous: number | undefined, next: number) =>
    previous === undefined ? next : previous + WEIGHT * (next - previous);
  return {
    get size() {
      return size;
    },
    /** A full batch of the current size took `ms`. */
    took(ms: number) {
      if (size === 1 || (fixedMs !== undefined && ms < fixedMs)) fixedMs = average(fixedMs, ms);
      rowMs = average(rowMs, Math.max(ms - (fixedMs ?? 0), 0) / size);
      const fits = Math.floor(budgetMs / Math.max(rowMs, 0.001));
      size = Math.max(1, Math.min(LARGEST_BATCH, 2 * size, fits));
    },
  };
}
