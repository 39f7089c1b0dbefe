import type { EndedPipeline, Tables } from '../../store/index.js';
import { queueNotifications } from '../notifications/queue.js';

// A non-concurrent pipeline resource runs one pipeline at a time in a project: while one of its
// name is unfinished and admitted, newer ones (and restarted ones) wait in its queue, their
// tasks held (migration 008), and are admitted one at a time, oldest first, as each one ends.

/** Whether a pipeline of `name` starting now waits in the queue. */
export async function mustQueue(
  tables: Tables,
  projectId: string,
  name: string,
  concurrent: boolean,
): Promise<boolean> {
  return !concurrent && (await tables.pipelines.admittedId(projectId, name)) !== undefined;
}

/**
 * Ends an unfinished pipeline in the transaction `tx`, queues the notifications of its end, and admits the next one of
 * its queue; false when it had already ended. Every end of a pipeline but its tasks' comes here.
 */
export async function finishPipeline(
  tx: Tables,
  id: string,
  status: 'successful' | 'failed' | 'aborted',
  time: string,
): Promise<boolean> {
  return afterEnd(tx, id, await tx.pipelines.finish(id, status, time), time);
}

/**
 * Ends the pipeline, as finishPipeline does, if none of its tasks is left unfinished: failed if
 * one did not succeed. One statement, cheap until then. The end of its tasks comes here.
 */
export async function settlePipeline(tx: Tables, id: string, time: string): Promise<boolean> {
  return afterEnd(tx, id, await tx.pipelines.settle(id, time), time);
}

/** What follows the end of a pipeline, if `ended` (else false): its notifications, and its queue's next. */
async function afterEnd(
  tx: Tables,
  id: string,
  ended: EndedPipeline | undefined,
  time: string,
): Promise<boolean> {
  if (!ended) return false;
  if (ended.notifies) await queueNotifications(tx, id, ended.status, time);
  if (!ended.concurrent && (await tx.pipelines.admittedId(ended.project_id, ended.name)) === undefined) {
    const next = await tx.pipelines.firstQueuedId(ended.project_id, ended.name);
    if (next) {
      await tx.pipelines.admit(next);
      await tx.tasks.admitPipeline(next);
    }
  }
  return true;
}
