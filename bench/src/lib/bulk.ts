import pg from 'pg';
import { BENCH_APPLICATION } from './database.js';

/** Ids shaped like KSUIDs (27 base62 characters), increasing with `n`, their first character telling their kind. */
export const idOf = (prefix: string, n: number) => `${prefix}${n.toString(36).padStart(26, '0')}`;

/**
 * The change log as a running server keeps it: its purger trims it to the newest 100,000
 * changes (the streams' window of resume). Rows written straight into a database fill the log
 * through its triggers, a change or more a row; a server started on a million of them would
 * spend the next hour trimming them on PostgreSQL, beside whatever is measured then. Every
 * writer runs this last, in its transaction: the same SQL on both databases.
 */
export const TRIM_CHANGE_LOG = 'DELETE FROM changes WHERE seq <= (SELECT max(seq) FROM changes) - 100000';

/**
 * The values the SQLite writers make in JavaScript, made in SQL by PostgreSQL's, which write a
 * table's rows in one `INSERT ... SELECT` over `generate_series`: `pg_temp.id_of(prefix, n)` is
 * `idOf`, `pg_temp.iso_time(ms)` is `new Date(ms).toISOString()`, as the store keeps times.
 * Temporary: they go with the connection, and the server's database keeps nothing of them.
 */
const FUNCTIONS = `
CREATE FUNCTION pg_temp.id_of(prefix text, n bigint) RETURNS text IMMUTABLE LANGUAGE plpgsql AS $$
DECLARE
  digits text := '';
BEGIN
  LOOP
    digits := substr('0123456789abcdefghijklmnopqrstuvwxyz', (n % 36)::int + 1, 1) || digits;
    n := n / 36;
    EXIT WHEN n = 0;
  END LOOP;
  RETURN prefix || lpad(digits, 26, '0');
END
$$;
CREATE FUNCTION pg_temp.iso_time(ms bigint) RETURNS text IMMUTABLE LANGUAGE sql AS $$
  SELECT to_char(timestamp 'epoch' + ms * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;`;

/**
 * Writes rows straight into the PostgreSQL database at `url` of a stopped server, as the SQLite
 * writers do into its file: `write` runs in one transaction, on a connection that has the
 * functions above. Then the database is vacuumed and analyzed.
 */
export async function writePostgres(url: string, write: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: BENCH_APPLICATION });
  await client.connect();
  try {
    await client.query(FUNCTIONS);
    await client.query('BEGIN');
    await write(client);
    await client.query(TRIM_CHANGE_LOG);
    await client.query('COMMIT');
    // A long-lived database that got these rows over time has its planner's statistics and its
    // visibility map up to date (autovacuum sees to both): this one is brought there before the
    // server starts, instead of autovacuum doing it in the middle of a measurement.
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}
