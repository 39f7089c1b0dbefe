/**
 * SQLite's codes (better-sqlite3 puts them in `code`) for storage that cannot take a write
 * now: a full disk, a read-only or failing file system, a lock held too long elsewhere. The
 * transaction was rolled back, so nothing was applied, and the write may succeed later.
 */
const STORAGE_UNAVAILABLE = /^SQLITE_(READONLY|FULL|IOERR|BUSY)(_|$)/;

export function isStorageUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && STORAGE_UNAVAILABLE.test(code);
}
