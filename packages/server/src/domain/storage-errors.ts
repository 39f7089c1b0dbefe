/**
 * The codes of errors that say the storage cannot take a write now, rather than that the
 * write is wrong. The transaction was rolled back, so nothing was applied, and the write may
 * succeed later. The condition lives in the domain, beside DomainError, because the layers
 * above the store decide about it: services carry on without bookkeeping writes, and
 * http/errors.ts answers 503 service_unavailable. It tests a plain `code` property and imports
 * nothing.
 *
 * - SQLite's (better-sqlite3 puts them in `code`): a full disk, a read-only or failing file
 *   system, a lock held too long elsewhere.
 * - PostgreSQL's SQLSTATE classes (node-postgres puts them in `code`): 08 connection lost,
 *   53 insufficient resources (disk full, too many connections), 57P01-57P03 the server is
 *   shutting down or starting, 40001/40P01 a serialization failure or a deadlock, 25006 a
 *   read-only transaction (a standby); and Node's own codes of a socket that cannot connect
 *   or was cut, and node-postgres's messages of the same.
 */
const STORAGE_UNAVAILABLE =
  /^(SQLITE_(READONLY|FULL|IOERR|BUSY)(_|$)|08...$|53...$|57P0[123]$|40001$|40P01$|25006$)/;

/** Node's codes of a connection that cannot be made or was lost (to PostgreSQL's socket). */
const CONNECTION_LOST = /^(ECONNREFUSED|ECONNRESET|ENOENT|ETIMEDOUT|EPIPE)$/;

export function isStorageUnavailable(error: unknown): boolean {
  const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
  if (typeof code === 'string' && STORAGE_UNAVAILABLE.test(code)) return true;
  if (
    typeof code === 'string' &&
    CONNECTION_LOST.test(code) &&
    ['connect', 'read', 'write'].includes(String(syscall))
  ) {
    return true;
  }
  // node-postgres's own, when the connection ends under a query: they carry no code.
  const message = (error as { message?: unknown } | undefined)?.message;
  return (
    typeof message === 'string' &&
    /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)/.test(
      message,
    )
  );
}
