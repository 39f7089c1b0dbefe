import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import {
  createPurger,
  type Logger,
  type PurgeCounts,
  type RetentionOptions,
  type Store,
} from '@pipewright/server';
import type { PurgeWorkerData } from './purge-worker.js';

/** Time between two looks for expired data: retention counts in days. */
const INTERVAL_MS = 60_000;

export interface Purging {
  /** Looks no more; a pass under way stops after its current batch, and is waited for. */
  stop(): Promise<void>;
}

/**
 * Deletes expired data now and then every minute. The look for it is a few index lookups on
 * this thread (through `store`); a pass, when there is something to delete, runs on a worker
 * thread with its own connection (purge-worker.ts), so that its batches never delay a request
 * (only, by a few milliseconds at most, a write waiting for the database's lock). The thread
 * lives only while it has work: it costs the process about 15 MiB of memory meanwhile.
 */
export function startPurging(
  store: Store,
  database: string,
  retention: RetentionOptions,
  logger: Logger,
): Purging {
  const checker = createPurger(store, retention);
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let worker: Worker | undefined;

  const next = () => {
    if (stopping) return;
    timer = setTimeout(look, INTERVAL_MS);
    timer.unref();
  };

  // One look at a time: the next is set once this one is over, its errors are caught.
  const look = async () => {
    timer = undefined;
    let work: boolean;
    try {
      work = await checker.hasWork();
    } catch (error) {
      // Once stopping, the stores may close under a look: nothing to report.
      if (!stopping) {
        logger.error('failed to look for expired data; looking again later', { error: String(error) });
      }
      return next();
    }
    // The server may have begun to stop while it looked: no pass starts then.
    if (!work || stopping) return next();
    const pass = new Worker(new URL('./purge-worker.js', import.meta.url), {
      workerData: { database, retention } satisfies PurgeWorkerData,
    });
    worker = pass;
    pass.on('message', (counts: PurgeCounts) => {
      if (Object.values(counts).some((n) => n > 0)) logger.info('purged expired data', { ...counts });
    });
    pass.on('error', (error) =>
      logger.error('failed to purge expired data; trying again later', { error: String(error) }),
    );
    pass.once('exit', () => {
      worker = undefined;
      next();
    });
  };

  timer = setTimeout(look, 0);
  timer.unref();
  return {
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      if (!worker) return;
      // An error of the thread (say, a busy database at its last batch) must not cut the stop short.
      const exited = once(worker, 'exit').catch(() => undefined);
      worker.postMessage('stop');
      await exited;
    },
  };
}
