// Checkpoints the database's write-ahead log on a thread of its own (checkpointing.ts starts
// it): the copy of the log into the database file, and its sync to disk, then never hold up
// the event loop that serves the API, whose connections leave checkpoints to this thread
// (background checkpoints, store/db.ts). It checkpoints every `intervalMs`, and at once when
// asked ('checkpoint', answered 'checkpointed'); 'stop' stops it.
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '@pipewright/server/retention';

export interface CheckpointWorkerData {
  databaseFile: string;
  intervalMs: number;
  /** One Int32: the pages of the log at the last checkpoint. */
  logPages: SharedArrayBuffer;
}

const port = parentPort;
if (!port) throw new Error('checkpoint-worker.js runs as a worker thread');
const { databaseFile, intervalMs, logPages } = workerData as CheckpointWorkerData;
const pages = new Int32Array(logPages);
const store = await openStore(databaseFile, 'relaxed');
// A PASSIVE checkpoint takes no lock that a writer waits for: a look at a log already copied
// costs a few microseconds.
const checkpoint = () => {
  try {
    // The log's length, copied or not: only a write begun once it is all copied starts it over.
    Atomics.store(pages, 0, store.checkpoint().logPages);
  } catch {
    // The database is busy with another checkpoint (an admin command's): the next look copies it.
  }
};
const timer = setInterval(checkpoint, intervalMs);
port.on('message', (message: 'checkpoint' | 'stop') => {
  if (message === 'checkpoint') {
    checkpoint();
    port.postMessage('checkpointed');
    return;
  }
  clearInterval(timer);
  void store.close();
  port.close();
});
