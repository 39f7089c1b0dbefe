// One purge pass on a thread of its own (purging.ts starts it when there is work): its
// batches run on a connection of their own, and never hold up the event loop that serves the
// API. Posts what it deleted, then ends; any message asks it to stop after the batch under way.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createPurger, openStore, type RetentionOptions } from '@pipewright/server/retention';

/** Not the lowest: a batch holds the database's write lock, which a starved thread would keep. */
const PURGE_NICENESS = 10;

export interface PurgeWorkerData {
  /** The SQLite file or PostgreSQL URL of the server's database. */
  database: string;
  retention: RetentionOptions;
}

const port = parentPort;
if (!port) throw new Error('purge-worker.js runs as a worker thread');
const { database, retention } = workerData as PurgeWorkerData;
// A lower CPU priority for this thread alone, so that the API's thread comes first on a busy
// machine: on Linux a thread's own id names it to setpriority(). Elsewhere, the usual priority.
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').at(-1)), PURGE_NICENESS);
} catch {}
// Its deletions need not reach the disk at each commit: a batch a power cut undoes is purged again.
const store = await openStore(database, 'relaxed');
const purger = createPurger(store, retention);
port.once('message', () => void purger.stop());
try {
  port.postMessage(await purger.purgeOnce());
} finally {
  await store.close();
  port.close();
}
