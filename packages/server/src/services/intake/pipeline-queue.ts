import type { Store } from '../../store/index.js';
import { queueNotifications } from '../notifications/queue.js';

// A non-concurrent pipeline resource runs one pipeline at a time in a project: while one of its
// name is unfinished and admitted, newer ones (and restarted ones) wait in its queue, their
// tasks held (migration 008), and are admitted one at a time, oldest first, as each one ends.

/** Whether a pipeline of `name` starting now waits in the queue. */
export function mustQueue(store: Store, projectId: string, name: string, concurrent: boolean): boolean {
  return !concurrent && store.pipelines.admittedId(projectId, name) !== undefined;
}

/**
 * Ends an unfinished pipeline, queues the notifications of its end, and admits the next one of
 * its queue; false when it had already ended. Every end of a pipeline comes here.
 */
export function finishPipeline(
  store: Store,
  id: string,
  status: 'successful' | 'failed' | 'aborted',
  time: string,
): boolean {
  const ended = store.pipelines.finish(id, status, time);
  if (!ended) return false;
  queueNotifications(store, id, status, time);
  if (!ended.concurrent && store.pipelines.admittedId(ended.project_id, ended.name) === undefined) {
    const next = store.pipelines.firstQueuedId(ended.project_id, ended.name);
    if (next) {
      store.pipelines.admit(next);
      store.tasks.admitPipeline(next);
    }
  }
  return true;
}
