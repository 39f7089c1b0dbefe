// Checkpoints the database's write-ahead log on a thread of its own (checkpointing.ts starts
// it): the copy of the log into the database file, and its sync to disk, then never hold up
// the event loop that serves the API, whose connections leave checkpoints to this thread
// (`checkpoints: 'background'`). Any message asks it to stop.
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '@pipewright/server/retention';

export interface CheckpointWorkerData {
  databaseFile: string;
  intervalMs: number;
}

const port = parentPort;
if (!port) throw new Error('checkpoint-worker.js runs as a worker thread');
const { databaseFile, intervalMs } = workerData as CheckpointWorkerData;
const store = await openStore(databaseFile, 'relaxed');
// A PASSIVE checkpoint takes no lock that a writer waits for: a look at a log already copied
// costs a few microseconds.
const timer = setInterval(() => {
  try {
    store.checkpoint();
  } catch {
    // The database is busy with another checkpoint (an admin command's): the next look copies it.
  }
}, intervalMs);
port.once('message', () => {
  clearInterval(timer);
  void store.close();
  port.close();
});
