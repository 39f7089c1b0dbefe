/**
 * SQLite's codes (better-sqlite3 puts them in `code`) for storage that cannot take a write
 * now: a full disk, a read-only or failing file system, a lock held too long elsewhere. The
 * transaction was rolled back, so nothing was applied, and the write may succeed later.
 * The condition lives in the domain, beside DomainError, because the layers above the store
 * decide about it: services carry on without bookkeeping writes, and http/errors.ts answers
 * 503 service_unavailable. It tests a plain `code` property and imports nothing.
 */
const STORAGE_UNAVAILABLE = /^SQLITE_(READONLY|FULL|IOERR|BUSY)(_|$)/;

export function isStorageUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && STORAGE_UNAVAILABLE.test(code);
}
