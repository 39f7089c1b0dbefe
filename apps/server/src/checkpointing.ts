import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { BackgroundCheckpoints, Logger } from '@pipewright/server';
import type { CheckpointWorkerData } from './checkpoint-worker.js';

/** Time between two checkpoints: the log grows by at most what the server writes meanwhile. */
const INTERVAL_MS = 50;

export interface Checkpointing extends BackgroundCheckpoints {
  /** Starts the thread, once the database's schema is up to date (it opens a connection of its own). */
  start(databaseFile: string, logger: Logger): void;
  /** Stops the thread, once its checkpoint under way is done. */
  stop(): Promise<void>;
}

/**
 * Checkpoints the database's write-ahead log every INTERVAL_MS, and when a transaction asks
 * (store/index.ts), on a thread of its own (checkpoint-worker.ts), for a server composed with
 * these background checkpoints: a checkpoint made by the connection whose commit filled the
 * log held the API's thread for the copy of thousands of pages and their sync (bench/README.md,
 * stall). Made before the server, which the thread's connection comes after; until the thread
 * starts, or once it is gone, the log counts as short and nobody waits. Should the thread fail,
 * the server's connections checkpoint by themselves past a larger log.
 */
export function backgroundCheckpointing(): Checkpointing {
  const logPages = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  const pages = new Int32Array(logPages);
  let worker: Worker | undefined;
  let exited: Promise<unknown> = Promise.resolve();
  // One request at a time: whoever asks while one is under way waits for it.
  let asked: Promise<void> | undefined;
  let answer = () => {};
  const gone = () => {
    worker = undefined;
    Atomics.store(pages, 0, 0);
    answer();
  };
  return {
    logPages: () => Atomics.load(pages, 0),
    catchUp() {
      const thread = worker;
      if (!thread) return Promise.resolve();
      asked ??= new Promise<void>((resolve) => {
        answer = () => {
          asked = undefined;
          resolve();
        };
        thread.postMessage('checkpoint');
      });
      return asked;
    },
    start(databaseFile, logger) {
      const thread = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
        workerData: { databaseFile, intervalMs: INTERVAL_MS, logPages } satisfies CheckpointWorkerData,
      });
      worker = thread;
      thread.on('message', () => answer());
      thread.on('error', (error) =>
        logger.error('the checkpoint thread failed: the server checkpoints by itself', {
          error: String(error),
        }),
      );
      exited = once(thread, 'exit')
        .catch(() => undefined)
        .finally(gone);
    },
    async stop() {
      const thread = worker;
      gone();
      thread?.postMessage('stop');
      await exited;
    },
  };
}
