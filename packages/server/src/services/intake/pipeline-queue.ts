import type { Tables } from '../../store/index.js';
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
 * its queue; false when it had already ended. Every end of a pipeline comes here.
 */
export async function finishPipeline(
  tx: Tables,
  id: string,
  status: 'successful' | 'failed' | 'aborted',
  time: string,
): Promise<boolean> {
  const ended = await tx.pipelines.finish(id, status, time);
  if (!ended) return false;
  if (ended.notifies) await queueNotifications(tx, id, status, time);
  if (!ended.concurrent && (await tx.pipelines.admittedId(ended.project_id, ended.name)) === undefined) {
    const next = await tx.pipelines.firstQueuedId(ended.project_id, ended.name);
    if (next) {
      await tx.pipelines.admit(next);
      await tx.tasks.admitPipeline(next);
    }
  }
  return true;
}
