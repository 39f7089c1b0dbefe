import { AsyncResource } from 'node:async_hooks';
import { open } from 'node:fs/promises';
import type { PoolClient, QueryConfig } from 'pg';
import { createAccountStore } from './accounts.store.js';
import { createApiKeyStore } from './api-keys.store.js';
import { createChangeStamp } from './change-stamp.js';
import { createChangeStore } from './changes.store.js';
import { createCommandExecutionStore } from './command-executions.store.js';
import { connectionGate } from './connection-gate.js';
import { isPostgresUrl } from './database-url.js';
import { type Checkpoints, type Db, type Durability, openDatabase } from './db.js';
import { type Dialect, postgres, sqlite } from './dialect.js';
import { createEventStore } from './events.store.js';
import { createIdentityStore } from './identities.store.js';
import { watchLog } from './log-watch.js';
import { createNotificationDeliveryStore } from './notification-deliveries.store.js';
import { createOrganizationStore } from './organizations.store.js';
import { createPipelineStore } from './pipelines.store.js';
import type * as Postgres from './postgres.js';
import { createProjectStore } from './projects.store.js';
import { createResourceStore } from './resources.store.js';
import { createRetentionStore } from './retention.store.js';
import { createScratchpadStore } from './scratchpads.store.js';
import { createServerInstanceStore } from './server-instances.store.js';
import { type Executor, sqliteExecutor } from './sql.js';
import { createStepExecutionStore } from './step-executions.store.js';
import { createStepOutputStore } from './step-output.store.js';
import { createTaskKeyStore } from './task-keys.store.js';
import { createTaskStore } from './tasks.store.js';
import { createTriggerScheduleStore } from './trigger-schedules.store.js';
import { createTriggerStore } from './triggers.store.js';
import { createWebhookStore } from './webhooks.store.js';

// The store's public surface: the row types that services and the scheduler name, and the data-dir lock.
export type { KeyOwner } from './api-keys.store.js';
export type { Change, ChangeKind } from './changes.store.js';
export { isPostgresUrl } from './database-url.js';
export type { BackgroundCheckpoints, Checkpoints, Db, Durability } from './db.js';
export type { EventFilters } from './events.store.js';
export { type ExclusiveLock, takeExclusiveLock } from './exclusive-lock.js';
export type { IdentityRecord } from './identities.store.js';
export type {
  ClaimedNotificationDelivery,
  DeliveryNext,
  NotificationDeliveryFilters,
  NotificationTarget,
} from './notification-deliveries.store.js';
export type { EndedPipeline, PipelineFilters, PipelineRecord } from './pipelines.store.js';
export type { ServerLock as InstanceLock } from './postgres.js';
export type { InstallationTarget, StagedChange } from './resources.store.js';
export type { BatchResult, Cutoffs } from './retention.store.js';
export { BEFORE_FIRST_CHUNK, type ChunkKey, type OutputChunk } from './step-output.store.js';
export type { TaskKeyOwner } from './task-keys.store.js';
export type { TaskFilters } from './tasks.store.js';
export type { TimeTrigger } from './trigger-schedules.store.js';
export type { WebhookRecord, WebhookTarget } from './webhooks.store.js';

/** Every table's store: queries built in the dialect `d`, run by the executor `x` of one connection (or pool). */
function createTables(d: Dialect, x: Executor) {
  const { q } = d;
  return {
    organizations: createOrganizationStore(q, x),
    accounts: createAccountStore(q, x),
    apiKeys: createApiKeyStore(d, x),
    projects: createProjectStore(q, x),
    resources: createResourceStore(q, x),
    triggers: createTriggerStore(d, x),
    triggerSchedules: createTriggerScheduleStore(d, x),
    webhooks: createWebhookStore(q, x),
    events: createEventStore(q, x),
    commandExecutions: createCommandExecutionStore(q, x),
    pipelines: createPipelineStore(d, x),
    tasks: createTaskStore(d, x),
    stepExecutions: createStepExecutionStore(d, x),
    taskKeys: createTaskKeyStore(q, x),
    scratchpads: createScratchpadStore(d, x),
    identities: createIdentityStore(q, x),
    retention: createRetentionStore(d, x),
    changes: createChangeStore(q, x),
    stepOutput: createStepOutputStore(d, x),
    notificationDeliveries: createNotificationDeliveryStore(d, x),
    serverInstances: createServerInstanceStore(d, x),
  };
}

type SyncTables = ReturnType<typeof createTables>;

/** A table's store as callers see it: each method answers with a promise, as a database server's would. */
type Answering<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/** Every table's store, as callers see them: outside a transaction, or inside one. */
export type Tables = { [K in keyof SyncTables]: Answering<SyncTables[K]> };

/** The stores inside a transaction, and a way to undo a part of it alone. */
export interface Transaction extends Tables {
  /** Runs `fn` so that, if it throws, what it wrote is undone and the rest of the transaction kept. */
  savepoint<T>(fn: () => Promise<T>): Promise<T>;
}

/** Every table's store over one database, and the way to group writes atomically. */
export interface Store extends Tables {
  /** Differs after anything is committed that this process may have read before (caches compare it). */
  changeStamp(): string;
  /**
   * Calls `listener` after each commit of another server on the database (PostgreSQL: their
   * notifications), and after a lost notification connection is back; until the returned
   * function is called. A SQLite file has one server: never.
   */
  onCommitElsewhere(listener: () => void): () => void;
  /**
   * Calls `listener` soon after each commit to the database, of this process or another, until
   * the returned function is called; several commits may make one call. SQLite: a watch of its
   * write-ahead log (log-watch.ts), which may call a moment before another process's commit shows.
   * PostgreSQL: after each commit of this server's stores, and as onCommitElsewhere.
   */
  onCommit(listener: () => void): () => void;
  /**
   * Runs `fn` in a transaction that holds the database's write lock from its start, through
   * the stores it is given: those of the store itself would wait for the transaction to end.
   */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /**
   * SQLite: copies what the write-ahead log holds into the database file, as far as readers
   * allow, without waiting for any lock (a PASSIVE checkpoint); returns the pages of the log,
   * and those copied so far. PostgreSQL checkpoints by itself: nothing to copy.
   */
  checkpoint(): { logPages: number; copiedPages: number };
  /**
   * Makes every commit so far durable without holding the server's thread: SQLite syncs the
   * write-ahead log to disk in the thread pool, so that the next synced commit has only its
   * own pages left to sync (a commit syncs on the thread that makes it). PostgreSQL syncs in
   * its own processes: nothing to do.
   */
  syncLog(): Promise<void>;
  /**
   * Gathers the planner's statistics of `table` afresh, outside any transaction and without
   * the write lock: PostgreSQL's planner, without them, reads a just-written pipeline's tasks
   * once for each of them when it recounts what holds them (bench/README.md, the chain's
   * max). Its ANALYZE blocks no writer. SQLite's plans of those queries are fixed by their
   * joins and hints: nothing to do.
   */
  refreshStatistics(table: 'tasks'): Promise<void>;
  close(): Promise<void>;
}

/** Each method of each table's store, run as `call` runs it. */
function answering(
  tables: SyncTables,
  call: (method: (...args: unknown[]) => unknown, args: unknown[]) => Promise<unknown>,
): Tables {
  const wrapped: Record<string, Record<string, unknown>> = {};
  for (const [name, table] of Object.entries(tables)) {
    const methods: Record<string, unknown> = {};
    for (const [key, method] of Object.entries(table)) {
      const fn = method as (...args: unknown[]) => unknown;
      methods[key] = (...args: unknown[]) => call(fn, args);
    }
    wrapped[name] = methods;
  }
  return wrapped as unknown as Tables;
}

/** A method's result as a promise, its exception as a rejection. */
function run(method: (...args: unknown[]) => unknown, args: unknown[]): Promise<unknown> {
  try {
    return Promise.resolve(method(...args));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Pages of write-ahead log past which a transaction waits for the checkpoint thread (the
 * length at which a connection of its own would checkpoint). Only a write that begins once the
 * log is all copied starts it over, and a stream of writes leaves the thread no such moment:
 * the log grew to the connections' own checkpoint (db.ts), a copy of 40 MiB and two syncs on
 * the API's thread (bench/README.md, stall). The wait gives the thread that moment.
 */
const LOG_PAGES_BEFORE_WAIT = 1_000;

/**
 * Before a transaction: a wait for the checkpoint thread to copy a long log, or undefined if
 * the log is short.
 */
function logRoom(checkpoints: Checkpoints): () => Promise<void> | undefined {
  if (checkpoints === 'auto') return () => undefined;
  return () => (checkpoints.logPages() > LOG_PAGES_BEFORE_WAIT ? checkpoints.catchUp() : undefined);
}

/**
 * The store over a SQLite connection. Its queries run at once, on this thread, unless a
 * transaction of this database file holds the gate (connection-gate.ts).
 */
export function createStore(db: Db, checkpoints: Checkpoints = 'auto'): Store {
  const gate = connectionGate(db.name);
  const roomInLog = logRoom(checkpoints);
  const x = sqliteExecutor(db);
  const sync = createTables(sqlite, x);
  // Inside a transaction, which holds the gate: calls run at once.
  const savepoint = db.prepare('SAVEPOINT part');
  const release = db.prepare('RELEASE part');
  const undo = db.prepare('ROLLBACK TO part');
  const inside: Transaction = {
    ...answering(sync, run),
    async savepoint<T>(fn: () => Promise<T>): Promise<T> {
      savepoint.run();
      try {
        const result = await fn();
        release.run();
        return result;
      } catch (error) {
        undo.run();
        release.run();
        throw error;
      }
    },
  };
  // Outside: at once if the gate is free, else in turn.
  const outside = answering(sync, (method, args) => {
    if (!gate.busy) return run(method, args);
    gate.checkOutside();
    return gate.exclusive(() => run(method, args));
  });
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  return {
    ...outside,
    changeStamp: createChangeStamp(db),
    // One server per file: what other processes commit (admin commands) the change stamp tells.
    onCommitElsewhere: () => () => {},
    onCommit: (listener) => (db.memory ? () => {} : watchLog(db.name, listener)),
    // IMMEDIATE: it takes the write lock before reading.
    transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
      gate.checkOutside();
      const transact = () =>
        gate.exclusive(() =>
          gate.within(async () => {
            begin.run();
            try {
              const result = await fn(inside);
              commit.run();
              return result;
            } catch (error) {
              if (db.inTransaction) rollback.run();
              throw error;
            }
          }),
        );
      // Without a wait, queued at once: in turn with the calls made after it.
      const wait = roomInLog();
      return wait ? wait.then(transact) : transact();
    },
    checkpoint() {
      const [result] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
      return { logPages: result?.log ?? 0, copiedPages: result?.checkpointed ?? 0 };
    },
    async syncLog() {
      if (db.memory) return;
      // A sync through any descriptor of the file writes all of it; a log not there has nothing to sync.
      const log = await open(`${db.name}-wal`, 'r').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
      try {
        await log?.datasync();
      } finally {
        await log?.close();
      }
    },
    refreshStatistics: async () => undefined,
    async close() {
      db.close();
    },
  };
}

/**
 * Commits of writes to each PostgreSQL database by each server of this process: its stores'
 * change stamp, and who is told of each (onCommit).
 */
const commits = new Map<string, { count: number; listeners: Set<() => void> }>();

/**
 * The store over a PostgreSQL database (postgres.ts): its queries run on a pool of
 * connections, beside one another; its transactions take turns on this process's gate, and
 * its writes hold the database's write lock, as SQLite's do.
 */
async function openPostgresStore(url: string, durability: Durability, server: string): Promise<Store> {
  const key = `${server}\n${url}`;
  let counter = commits.get(key);
  if (!counter) {
    counter = { count: 0, listeners: new Set() };
    commits.set(key, counter);
  }
  const own = counter;
  // Loaded here, with `pg`, only by a server on PostgreSQL: SQLite's start is the sooner for it.
  const [{ connectPostgres, transactionExecutor }, { watchCommits }] = await Promise.all([
    import('./postgres.js'),
    import('./postgres-commits.js'),
  ]);
  const elsewhere = await watchCommits(url, server);
  const connection = await connectPostgres(
    url,
    durability,
    // Told in the context the store is opened in, not the committing transaction's: what a
    // listener then calls of the stores is not the transaction's doing.
    AsyncResource.bind(() => {
      own.count += 1;
      for (const listener of own.listeners) listener();
    }),
    (pool) => elsewhere.own(pool),
  ).catch(async (error: unknown) => {
    await elsewhere.release();
    throw error;
  });
  const gate = connectionGate(url);
  const outside = answering(createTables(postgres, connection.executor), (method, args) => {
    gate.checkOutside();
    return run(method, args);
  });
  // The client of the transaction under way: transactions take turns, one at a time.
  let client: PoolClient | undefined;
  const current = {
    query: (config: QueryConfig) => {
      if (!client) throw new Error('no transaction is under way');
      return client.query(config);
    },
  };
  const inside: Transaction = {
    ...answering(createTables(postgres, transactionExecutor(current)), run),
    async savepoint<T>(fn: () => Promise<T>): Promise<T> {
      await current.query({ text: 'SAVEPOINT part' });
      try {
        const result = await fn();
        await current.query({ text: 'RELEASE SAVEPOINT part' });
        return result;
      } catch (error) {
        await current.query({ text: 'ROLLBACK TO SAVEPOINT part' });
        await current.query({ text: 'RELEASE SAVEPOINT part' });
        throw error;
      }
    },
  };
  return {
    ...outside,
    // Commits of this process, and of the others as their notifications tell.
    changeStamp: () => `${own.count}:${elsewhere.stamp()}`,
    onCommitElsewhere: (listener) => elsewhere.subscribe(listener),
    onCommit(listener) {
      // A listener of its own: the same one given twice is told twice, and stops alone.
      const told = () => listener();
      own.listeners.add(told);
      const stopElsewhere = elsewhere.subscribe(told);
      return () => {
        own.listeners.delete(told);
        stopElsewhere();
      };
    },
    transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
      gate.checkOutside();
      return gate.exclusive(() =>
        gate.within(async () => {
          const started = await connection.begin();
          client = started;
          let result: T;
          try {
            result = await fn(inside);
          } catch (error) {
            client = undefined;
            await connection.end(started, false).catch(() => {});
            throw error;
          }
          client = undefined;
          await connection.end(started, true);
          return result;
        }),
      );
    },
    checkpoint: () => ({ logPages: 0, copiedPages: 0 }),
    syncLog: async () => undefined,
    async refreshStatistics(table) {
      gate.checkOutside();
      await connection.pool.query(`ANALYZE ${table}`);
    },
    close: async () => {
      await Promise.all([connection.pool.end(), elsewhere.release()]);
    },
  };
}

/**
 * Opens the store of `database`: a PostgreSQL database's URL (postgres://...), or a SQLite
 * file, created if need be. Either way its schema is brought up to date first. On PostgreSQL
 * the stores of one `server` tell commits of other servers from their own (tests run several
 * servers in one process).
 */
export async function openStore(
  database: string,
  durability: Durability = 'full',
  checkpoints: Checkpoints = 'auto',
  server = '',
): Promise<Store> {
  if (isPostgresUrl(database)) return openPostgresStore(database, durability, server);
  return createStore(openDatabase(database, durability, checkpoints), checkpoints);
}

/** postgres.ts's `lockServerInstance`, loaded with `pg` only by a server on PostgreSQL. */
export async function lockServerInstance(
  ...args: Parameters<typeof Postgres.lockServerInstance>
): Promise<Postgres.ServerLock> {
  return (await import('./postgres.js')).lockServerInstance(...args);
}
