import pg from 'pg';

/**
 * What other processes commit to a PostgreSQL database, as its notifications tell: every
 * transaction that writes notifies the channel COMMITS_CHANNEL as it commits (postgres.ts), and
 * each process listens on one connection of its own. Its stores' change stamp moves with each
 * commit of another process, and its subscribers (the scheduler, the live streams) are told.
 *
 * While that connection is down nothing is told, so the stamp then differs at every call (caches
 * trust nothing), and the subscribers are told once it is back, as if everything had changed:
 * what was committed meanwhile is found by their next look. Their slow polls are the last resort.
 */
export const COMMITS_CHANNEL = 'pipewright_commits';

/** How long to wait before connecting again, at most. */
const MAX_RECONNECT_DELAY_MS = 2_000;

export interface CommitWatch {
  /** Differs after another process committed; differs at every call while unsure. */
  stamp(): string;
  /** Calls `listener` after each commit of another process, and after a reconnect; until the returned function is called. */
  subscribe(listener: () => void): () => void;
  /** Counts the connections of `pool` as this process's: their commits are not another's. */
  own(pool: pg.Pool): void;
  /** One user less; the last one ends the listening connection. */
  release(): Promise<void>;
}

/** The watches of this process, by server and database URL, each with how many stores use it. */
const watches = new Map<string, Promise<CommitWatch & { users: number }>>();

/**
 * The watch of the database at `url`, shared by the stores of server `server` in this process
 * (the program has one; tests run several); resolves once it listens.
 */
export async function watchCommits(url: string, server: string): Promise<CommitWatch> {
  const key = `${server}\n${url}`;
  let watch = watches.get(key);
  if (!watch) {
    watch = listen(url, () => watches.delete(key));
    watches.set(key, watch);
    watch.catch(() => watches.delete(key));
  }
  const opened = await watch;
  opened.users += 1;
  return opened;
}

async function listen(url: string, ended: () => void): Promise<CommitWatch & { users: number }> {
  const listeners = new Set<() => void>();
  const ownProcesses = new Set<number>();
  let commits = 0;
  let unsure = 0;
  let client: pg.Client | undefined;
  let closed = false;
  let delay = 100;

  const tell = () => {
    for (const listener of listeners) listener();
  };
  const connect = async () => {
    const next = new pg.Client({ connectionString: url });
    next.on('error', () => {});
    next.on('notification', (message) => {
      if (ownProcesses.has(message.processId)) return;
      commits += 1;
      tell();
    });
    next.once('end', () => {
      client = undefined;
      if (closed) return;
      tell();
      void reconnect();
    });
    await next.connect();
    await next.query(`LISTEN ${COMMITS_CHANNEL}`);
    if (closed) {
      await next.end();
      return;
    }
    client = next;
    delay = 100;
  };
  const reconnect = async () => {
    while (!closed && !client) {
      await new Promise((resolve) => setTimeout(resolve, delay).unref());
      delay = Math.min(MAX_RECONNECT_DELAY_MS, delay * 2);
      try {
        await connect();
        // What was committed while nobody listened is for the subscribers' next look.
        commits += 1;
        tell();
      } catch {
        // Tried again after the delay.
      }
    }
  };
  await connect();

  const watch: CommitWatch & { users: number } = {
    users: 0,
    stamp: () => (client ? String(commits) : `unsure ${++unsure}`),
    subscribe(listener) {
      const once = () => listener();
      listeners.add(once);
      return () => listeners.delete(once);
    },
    own(pool) {
      pool.on('connect', (connection) => ownProcesses.add(processOf(connection)));
      pool.on('remove', (connection) => ownProcesses.delete(processOf(connection)));
    },
    async release() {
      watch.users -= 1;
      if (watch.users > 0) return;
      closed = true;
      ended();
      await client?.end().catch(() => {});
    },
  };
  return watch;
}

/** The number of the server process behind a connection, which its notifications carry. */
function processOf(connection: pg.Client): number {
  return (connection as pg.Client & { processID: number }).processID;
}
