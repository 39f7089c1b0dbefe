// What the server's store does on PostgreSQL that the benchmark's own connections imitate or
// watch (packages/server/src/store/postgres.ts and postgres-commits.ts, which do not export
// them). Apart from the rest of lib/database.ts, so that a bare baseline server loads it alone.

/** The channel every writing commit notifies, on which each server listens for the others'. */
export const COMMITS_CHANNEL = 'pipewright_commits';

/** The advisory lock every writing transaction takes first, held until its commit. */
export const WRITE_LOCK = 7_069_727_711;

/** How a writing transaction of the store ends: it notifies COMMITS_CHANNEL, then commits. */
export const COMMIT_AND_TELL = `SELECT pg_notify('${COMMITS_CHANNEL}', '') WHERE pg_current_xact_id_if_assigned() IS NOT NULL; COMMIT`;
