const FIRST_BATCH = 16;
const LARGEST_BATCH = 2000;

/**
 * A batch size that follows a time budget: rows deleted per batch vary (a pipeline takes its
 * tasks, steps and output along), so the size is scaled by how long the deletions of the last
 * full batch took (not its commit, which now and then includes a checkpoint of the WAL), at
 * most doubling at a time.
 *
 * The budget is for the rows, past what any batch costs whatever its size: on PostgreSQL each
 * statement is a round trip, and a batch of one row took more than the 2 ms a SQLite batch is
 * given, which shrank every batch to one row (85 pipelines a second). That fixed cost is taken
 * as the quickest batch of one row seen, near enough all fixed cost: SQLite's batches rarely
 * shrink to one row, and where they do, what they cost beyond it is theirs as well.
 */
export function batchSizer(budgetMs: number) {
  let size = FIRST_BATCH;
  let fixedMs = 0;
  let fixedSeen = false;
  return {
    get size() {
      return size;
    },
    /** A full batch of the current size took `ms`. */
    took(ms: number) {
      if (size === 1) {
        fixedMs = fixedSeen ? Math.min(fixedMs, ms) : ms;
        fixedSeen = true;
      }
      const scale = Math.min(2, budgetMs / Math.max(ms - fixedMs, 0.01));
      size = Math.max(1, Math.min(LARGEST_BATCH, Math.floor(size * scale)));
    },
  };
}
