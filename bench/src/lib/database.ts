import { startPostgresCluster } from '@pipewright/testing/postgres';
import type Database from 'better-sqlite3';
import pg from 'pg';
import { openReadOnly, type Pipewright } from './pipewright.js';

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

/** The SQLite file of `dataDir`, read-only; each statement prepared once. */
export function sqliteView(dataDir: string): DatabaseView {
  const db = openReadOnly(dataDir);
  const statements = new Map<string, Database.Statement<unknown[]>>();
  return {
    all: async <T>(sql: string, ...params: unknown[]) => {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = db.prepare<unknown[]>(sql);
        statements.set(sql, statement);
      }
      return statement.all(...params) as T[];
    },
    close: async () => {
      db.close();
    },
  };
}

/** The PostgreSQL database at `url`, over one connection of the benchmark's (`BENCH_APPLICATION`). */
export function postgresView(url: string): DatabaseView {
  const pool = new pg.Pool({ connectionString: url, max: 1, application_name: BENCH_APPLICATION });
  return {
    all: async <T>(sql: string, ...params: unknown[]) => {
      let n = 0;
      const numbered = sql.replace(/\?/g, () => {
        n += 1;
        return `$${n}`;
      });
      return (await pool.query(numbered, params)).rows as T[];
    },
    close: () => pool.end(),
  };
}

/** A view of the database `server` runs on. */
export function viewOf(server: Pipewright): DatabaseView {
  return server.database === undefined ? sqliteView(server.dataDir) : postgresView(server.database);
}

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
