import { join } from 'node:path';
import { startPostgresCluster } from '@pipewright/testing/postgres';
import Database from 'better-sqlite3';
import pg from 'pg';
import { DATABASE_FILE, openReadOnly, type Pipewright } from './pipewright.js';
import { COMMIT_AND_TELL, WRITE_LOCK } from './postgres-store.js';

/** The database of the servers a run starts: `--database sqlite` (the default) or `postgres`. */
export type DatabaseKind = 'sqlite' | 'postgres';
export const DATABASE_KINDS: readonly DatabaseKind[] = ['sqlite', 'postgres'];

/** The `application_name` of the benchmark's own PostgreSQL connections, told apart from the servers'. */
export const BENCH_APPLICATION = 'pipewright-bench';

/**
 * Where the servers of a run keep their data. On SQLite, each in its data directory's file; on
 * PostgreSQL, each data directory in a database of its own, made at its first start in one
 * throwaway cluster for the whole run (`@pipewright/testing/postgres`: this machine, `fsync=off`,
 * a Unix socket), and found again at a restart on that directory, as its SQLite file would be.
 */
export interface Databases {
  kind: DatabaseKind;
  /** The `--database` URL of a server on `dataDir`, or undefined for its SQLite file. */
  urlFor(dataDir: string): Promise<string | undefined>;
  stop(): Promise<void>;
}

export async function startDatabases(kind: DatabaseKind): Promise<Databases> {
  if (kind === 'sqlite') return { kind, urlFor: async () => undefined, stop: async () => {} };
  const cluster = await startPostgresCluster();
  const made = new Map<string, Promise<string>>();
  return {
    kind,
    urlFor: (dataDir) => {
      let url = made.get(dataDir);
      if (url === undefined) {
        url = cluster.createDatabase(`bench_${made.size + 1}`);
        made.set(dataDir, url);
      }
      return url;
    },
    stop: async () => cluster.stop(),
  };
}

/**
 * A read-only view of a server's database, SQLite's file or PostgreSQL's, for counting and
 * polling without going through the API it loads. PostgreSQL's counts and BIGINTs come as
 * strings: read numbers with `Number()`.
 */
export interface DatabaseView {
  /** The rows of `sql`, its parameters written `?` (no literal `?` in it: they become `$1`, `$2`... on PostgreSQL). */
  all<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * A connection of the benchmark's that also writes to a server's database, as another process
 * of the server's (its scheduler) would: the server learns of its commits as of its own.
 */
export interface DatabaseWriter extends DatabaseView {
  /** Runs `sql` (parameters as `all`'s) in a transaction of its own, committed when it resolves. */
  run(sql: string, ...params: unknown[]): Promise<void>;
}

/** The statements of `db`, each prepared once. */
function preparedOnce(db: Database.Database): (sql: string) => Database.Statement<unknown[]> {
  const statements = new Map<string, Database.Statement<unknown[]>>();
  return (sql) => {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare<unknown[]>(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
}

/** A connection to SQLite's file `db`, each statement prepared once. */
function sqliteConnection(db: Database.Database): DatabaseWriter {
  const statement = preparedOnce(db);
  return {
    all: async <T>(sql: string, ...params: unknown[]) => statement(sql).all(...params) as T[],
    run: async (sql, ...params) => {
      statement(sql).run(...params);
    },
    close: async () => {
      db.close();
    },
  };
}

/** The SQLite file of `dataDir`, read-only; each statement prepared once. */
export function sqliteView(dataDir: string): DatabaseView {
  return sqliteConnection(openReadOnly(dataDir));
}

/**
 * The names of the statements of PostgreSQL connections, by their SQL text with `?` numbered: each
 * prepared once per connection, as SQLite's are, and as the server's store prepares its own.
 */
const statementNames = new Map<string, { name: string; text: string }>();

function namedStatement(sql: string): { name: string; text: string } {
  let named = statementNames.get(sql);
  if (named === undefined) {
    let n = 0;
    const text = sql.replace(/\?/g, () => {
      n += 1;
      return `$${n}`;
    });
    named = { name: `bench_${statementNames.size}`, text };
    statementNames.set(sql, named);
  }
  return named;
}

/** Runs `sql` (parameters written `?`) on `on`, a pool or a connection taken from it. */
async function query<T>(on: pg.Pool | pg.PoolClient, sql: string, params: unknown[]): Promise<T[]> {
  return (await on.query({ ...namedStatement(sql), values: params })).rows as T[];
}

/**
 * One connection of the benchmark's (`BENCH_APPLICATION`) to the PostgreSQL database at `url`.
 * Each transaction of `run` does what the server's store does with its own (postgres-store.ts):
 * it takes the write lock first, so that the change log's rows commit in the order of their
 * `seq` (which the change feed relies on), and notifies the channel of commits as it commits,
 * which tells the servers on the database.
 */
function postgresConnection(url: string): DatabaseWriter {
  const pool = new pg.Pool({ connectionString: url, max: 1, application_name: BENCH_APPLICATION });
  return {
    all: (sql, ...params) => query(pool, sql, params),
    run: async (sql, ...params) => {
      const client = await pool.connect();
      try {
        await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${WRITE_LOCK})`);
        await query(client, sql, params);
        await client.query(COMMIT_AND_TELL);
        client.release();
      } catch (error) {
        // The connection goes, and its transaction with it.
        client.release(error as Error);
        throw error;
      }
    },
    close: () => pool.end(),
  };
}

/** The PostgreSQL database at `url`, over one connection of the benchmark's (`BENCH_APPLICATION`). */
export function postgresView(url: string): DatabaseView {
  return postgresConnection(url);
}

/** A view of the database `server` runs on. */
export function viewOf(server: Pipewright): DatabaseView {
  return server.database === undefined ? sqliteView(server.dataDir) : postgresView(server.database);
}

/**
 * A writer of the database `server` runs on: on PostgreSQL, a connection that commits as the
 * server's store does (postgres-store.ts); on SQLite, a connection to its file, whose changes the
 * server sees (`PRAGMA data_version`).
 */
export function writerOf(server: Pipewright): DatabaseWriter {
  if (server.database !== undefined) return postgresConnection(server.database);
  const db = new Database(join(server.dataDir, DATABASE_FILE));
  // The server's own writes hold the file a moment: they are waited for, not failed on.
  db.pragma('busy_timeout = 5000');
  return sqliteConnection(db);
}

/** The database of `server` as the bare baseline servers take it: its PostgreSQL URL, or its SQLite file. */
export const databaseTarget = (server: Pipewright): string =>
  server.database ?? join(server.dataDir, DATABASE_FILE);

/** The name of the database `server` runs on, for the names of baselines. */
export const databaseName = (server: Pipewright): string =>
  server.database === undefined ? 'SQLite' : 'PostgreSQL';

/** The one row of `sql`, if any. */
export async function one<T>(view: DatabaseView, sql: string, ...params: unknown[]): Promise<T | undefined> {
  return (await view.all<T>(sql, ...params))[0];
}

/**
 * How often to poll the database of `server` where `ms` would do on SQLite. A look at SQLite's
 * file costs the benchmark's process microseconds; one at PostgreSQL is a round trip and a
 * backend's work, about 2 ms on this 2-core machine, taken from the server's CPU: polled every
 * 2 ms, the 200 tasks of `scheduler` took 10-15% longer than polled every 10 or 50 ms (alike).
 * So PostgreSQL is polled every 10 ms at most often, a step of 0.5% of that pipeline's time.
 */
export const pollMs = (server: Pipewright, ms: number): number =>
  server.database === undefined ? ms : Math.max(ms, 10);
