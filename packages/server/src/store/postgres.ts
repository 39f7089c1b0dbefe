import { readdirSync, readFileSync } from 'node:fs';
import type { Compilable } from 'kysely';
import pg from 'pg';
import type { Durability } from './db.js';
import { COMMITS_CHANNEL } from './postgres-commits.js';
import type { Executor } from './sql.js';

/**
 * The store's connections to PostgreSQL: a pool per store, an executor over it, the
 * serialization of writes, and the migrations.
 *
 * Writes are serialized, as SQLite's are: every statement that writes outside a transaction,
 * and every transaction from its start, first takes one transaction-scoped advisory lock
 * (WRITE_LOCK), held until its commit. So the stores keep the guarantees they had on SQLite,
 * whatever the interleaving of requests and of server instances: a transaction reads what it
 * then writes, alone; and the change log's rows (the `log_change` trigger of the schema) commit
 * in the order of their `seq`, which the change feed relies on to miss none. Reads take no lock
 * and run beside the writes, each statement on its own snapshot. Finer locks are for later,
 * should the benchmarks show this one to be the limit (bench/README.md).
 */

/** The advisory lock of writes; any constant, the same for every instance. */
const WRITE_LOCK = 7_069_727_711;
/** The advisory lock of migrations, held by the instance that applies them. */
const MIGRATION_LOCK = 7_069_727_712;

const COMMIT_AND_TELL = `SELECT pg_notify('${COMMITS_CHANNEL}', '') WHERE pg_current_xact_id_if_assigned() IS NOT NULL; COMMIT`;

const MIGRATIONS_DIR = new URL('./migrations/postgres/', import.meta.url);

/**
 * Integers are BIGINT in the schema, and sums are NUMERIC: both as JavaScript numbers, as
 * SQLite gives them (counts, sizes and times in milliseconds stay far below 2^53).
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return Number;
    return pg.types.getTypeParser(oid, format);
  },
};

/** Something that runs queries: the pool, or the client of a transaction. */
interface Queryable {
  query(config: pg.QueryConfig): Promise<pg.QueryResult>;
}

/**
 * Each SQL text is prepared once per connection, under a name of its own; a store's queries
 * have few shapes. Past the bound, new texts get new names (a name never changes its text).
 */
const MAX_NAMED = 1_000;
function statementNames() {
  const names = new Map<string, string>();
  let next = 0;
  return (text: string) => {
    let name = names.get(text);
    if (name === undefined) {
      if (names.size >= MAX_NAMED) names.clear();
      name = `s${next++}`;
      names.set(text, name);
    }
    return name;
  };
}

const nameOf = statementNames();

function config(query: Compilable<unknown>): pg.QueryConfig & { write: boolean } {
  const compiled = query.compile();
  return {
    name: nameOf(compiled.sql),
    text: compiled.sql,
    values: compiled.parameters as unknown[],
    write: compiled.query.kind !== 'SelectQueryNode',
  };
}

/** An executor over `target`; `write` runs a statement that writes (outside a transaction, under the lock). */
function executorOver(target: Queryable, write: (c: pg.QueryConfig) => Promise<pg.QueryResult>): Executor {
  const run = (query: Compilable<unknown>) => {
    const { write: writes, ...c } = config(query);
    return writes ? write(c) : target.query(c);
  };
  return {
    async all<R>(query: Compilable<R>) {
      return (await run(query)).rows as R[];
    },
    async first<R>(query: Compilable<R>) {
      return (await run(query)).rows[0] as R | undefined;
    },
    async run(query: Compilable<unknown>) {
      return { changes: (await run(query)).rowCount ?? 0 };
    },
  };
}

export interface PostgresConnection {
  pool: pg.Pool;
  /** Runs queries outside any transaction; writes each take the lock. */
  executor: Executor;
  /** Begins a transaction that holds the write lock; its client runs the transaction's queries. */
  begin(): Promise<pg.PoolClient>;
  /** Ends the transaction of `client`, committing or rolling it back, and gives the client back. */
  end(client: pg.PoolClient, commit: boolean): Promise<void>;
}

/**
 * Connects to the database at `url` and brings its schema up to date. `relaxed` durability
 * does not wait for a commit to reach the disk (synchronous_commit off), as SQLite's NORMAL.
 * `committed` is called after each commit of a write; `ownPool` is given the pool before its first connection.
 */
export async function connectPostgres(
  url: string,
  durability: Durability,
  committed: () => void = () => {},
  ownPool: (pool: pg.Pool) => void = () => {},
): Promise<PostgresConnection> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 8,
    types,
    ...(durability === 'relaxed' ? { options: '-c synchronous_commit=off' } : {}),
  });
  // An idle client's error (the server went away) ends that client only; the next query
  // reconnects or fails, and its caller answers.
  pool.on('error', () => {});
  // A client taken from the pool has no listener of its errors (the pool removes its own): a
  // transaction's, between two of its queries when the server goes away, would crash the
  // process. Its next query fails instead, and its transaction is rolled back.
  pool.on('connect', (client) => client.on('error', () => {}));
  ownPool(pool);
  await migrate(pool);
  const begin = async () => {
    const client = await pool.connect();
    try {
      await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${WRITE_LOCK})`);
      return client;
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  };
  const end = async (client: pg.PoolClient, commit: boolean) => {
    try {
      // A transaction that wrote tells the other processes as it commits (postgres-commits.ts);
      // one that wrote nothing has no transaction id, and tells nobody.
      await client.query(commit ? COMMIT_AND_TELL : 'ROLLBACK');
      client.release();
      if (commit) committed();
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  };
  const writeAlone = async (c: pg.QueryConfig) => {
    const client = await begin();
    let result: pg.QueryResult;
    try {
      result = await client.query(c);
    } catch (error) {
      await end(client, false).catch(() => {});
      throw error;
    }
    await end(client, true);
    return result;
  };
  return { pool, executor: executorOver(pool, writeAlone), begin, end };
}

/** The executor of a transaction's client: its writes already hold the lock. */
export function transactionExecutor(client: Queryable): Executor {
  return executorOver(client, (c) => client.query(c));
}

/**
 * Applies the numbered `NNN_name.sql` files above the database's version, each in a
 * transaction, under an advisory lock: instances started together apply them once.
 */
async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)');
      const { rows } = await client.query<{ version: number }>(
        'SELECT max(version) AS version FROM schema_version',
      );
      const current = rows[0]?.version ?? 0;
      const files = readdirSync(MIGRATIONS_DIR)
        .filter((name) => /^\d{3}_[a-z0-9_]+\.sql$/.test(name))
        .sort();
      for (const name of files) {
        const version = Number(name.slice(0, 3));
        if (version <= current) continue;
        const text = readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8');
        await client.query('BEGIN');
        try {
          await client.query(text);
          await client.query('DELETE FROM schema_version');
          await client.query('INSERT INTO schema_version (version) VALUES ($1)', [version]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        }
      }
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
    }
    client.release();
  } catch (error) {
    client.release(error as Error);
    throw error;
  }
}

/** The class of the advisory locks of server instances, each keyed by its name's hash. */
const INSTANCE_LOCK_CLASS = 706_972_771;
/** How often a server waiting for the lock tries again. */
const INSTANCE_LOCK_POLL_MS = 500;

export interface ServerLock {
  release(): Promise<void>;
}

/**
 * Makes this process the one server named `instance` on the database at `url`, waiting (and
 * calling `onWait` once) while another process holds that name: a server's tasks name its
 * instance, and a server that starts ends those its previous run left at once, which must not
 * be another's running ones. Servers of other names run beside it. A second server of the same
 * name is a standby, which takes over when the first stops or dies (PostgreSQL releases the
 * lock with its connection). Should this connection be lost (the database restarted), the lock
 * is taken again; `lost` is called if another server took it meanwhile, and this one must stop.
 */
export async function lockServerInstance(
  url: string,
  instance: string,
  onWait: () => void,
  lost: (error: Error) => void,
): Promise<ServerLock> {
  let released = false;
  let client: pg.Client | undefined;
  const take = async (wait: boolean): Promise<boolean> => {
    let waited = false;
    for (;;) {
      const attempt = new pg.Client({ connectionString: url });
      attempt.on('error', () => {});
      await attempt.connect();
      const { rows } = await attempt.query<{ held: boolean }>(
        'SELECT pg_try_advisory_lock($1, hashtext($2)) AS held',
        [INSTANCE_LOCK_CLASS, instance],
      );
      if (rows[0]?.held) {
        client = attempt;
        // The connection's end, unasked for, loses the lock: it is taken again.
        attempt.once('end', () => {
          if (!released) void retake();
        });
        return true;
      }
      await attempt.end();
      if (!wait) return false;
      if (!waited) onWait();
      waited = true;
      await new Promise((resolve) => setTimeout(resolve, INSTANCE_LOCK_POLL_MS));
    }
  };
  // Taken again as soon as the database answers; the database's requests meanwhile get 503.
  const retake = async () => {
    for (;;) {
      if (released) return;
      try {
        if (!(await take(false))) lost(new Error(`another server took the lock of instance ${instance}`));
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, INSTANCE_LOCK_POLL_MS));
      }
    }
  };
  await take(true);
  return {
    async release() {
      released = true;
      await client?.end().catch(() => {});
    },
  };
}
