import type { Schemas } from '@pipewright/types';
import { afterFailure } from '../domain/execution/statuses.js';
import { formatTime } from '../domain/time.js';
import { finishPipeline } from '../services/index.js';
import type { Store } from '../store/index.js';

export type AttemptEnd = { outcome: 'succeeded' } | { outcome: 'failed'; message: string };

/**
 * Records the end of one attempt of a task, in one transaction: success, a retry, or a
 * failure for good (which, with `on_failure: abort`, aborts the rest of the pipeline);
 * then ends the pipeline when nothing of it is left to run. An attempt already ended by
 * someone else (an abort) changes nothing. Returns the tasks it aborted.
 */
export function completeAttempt(store: Store, task: Schemas['Task'], end: AttemptEnd, now: Date): string[] {
  return store.transaction(() => {
    const time = formatTime(now);
    const attempt = task.retry;
    store.taskKeys.removeForTask(task.id);
    let aborted: string[] = [];
    if (end.outcome === 'succeeded') {
      if (store.tasks.markSuccessful(task.id, attempt, time)) store.tasks.unblockDependents(task.id);
    } else {
      const next = afterFailure({ ...task.pipeline_task, retry: attempt });
      if (next.action === 'retry') {
        const notBefore = formatTime(new Date(now.getTime() + next.delaySeconds * 1000));
        store.tasks.scheduleRetry(task.id, attempt, notBefore, end.message);
      } else if (store.tasks.markFailed(task.id, attempt, time, end.message)) {
        // `on_failure: continue` lets the dependents run; `abort` ends everything left.
        if (next.abortPipeline) aborted = store.tasks.abortUnfinished(task.pipeline_id, time);
        else store.tasks.unblockDependents(task.id);
      }
    }
    settlePipeline(store, task.pipeline_id, time);
    return aborted;
  });
}

/**
 * Ends the pipeline if none of its tasks is left unfinished: failed if any task did not
 * succeed. Cheap until then (one row of an index of unfinished tasks).
 */
export function settlePipeline(store: Store, pipelineId: string, time: string): void {
  if (store.tasks.anyUnfinished(pipelineId)) return;
  finishPipeline(store, pipelineId, store.tasks.anyUnsuccessful(pipelineId) ? 'failed' : 'successful', time);
}
