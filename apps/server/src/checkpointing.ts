import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { Logger } from '@pipewright/server';
import type { CheckpointWorkerData } from './checkpoint-worker.js';

/** Time between two checkpoints: the log grows by at most what the server writes meanwhile. */
const INTERVAL_MS = 100;

export interface Checkpointing {
  /** Stops the thread, once its checkpoint under way is done. */
  stop(): Promise<void>;
}

/**
 * Checkpoints the database's write-ahead log every INTERVAL_MS on a thread of its own
 * (checkpoint-worker.ts), for a server composed with `checkpoints: 'background'`: a checkpoint
 * made by the connection whose commit filled the log held the API's thread for the copy of
 * thousands of pages and their sync (bench/README.md, stall). Should the thread fail, the
 * server's connections checkpoint by themselves past a larger log.
 */
export function startCheckpointing(databaseFile: string, logger: Logger): Checkpointing {
  const worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
    workerData: { databaseFile, intervalMs: INTERVAL_MS } satisfies CheckpointWorkerData,
  });
  worker.on('error', (error) =>
    logger.error('the checkpoint thread failed: the server checkpoints by itself', { error: String(error) }),
  );
  const exited = once(worker, 'exit').catch(() => undefined);
  return {
    async stop() {
      worker.postMessage('stop');
      await exited;
    },
  };
}
