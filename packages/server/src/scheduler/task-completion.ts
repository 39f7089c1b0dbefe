import type { Schemas } from '@pipewright/types';
import { afterFailure } from '../domain/execution/statuses.js';
import { formatTime } from '../domain/time.js';
import { settlePipeline } from '../services/index.js';
import type { Tables } from '../store/index.js';

export type AttemptEnd = { outcome: 'succeeded' } | { outcome: 'failed'; message: string };

/**
 * Records the end of one attempt of a task, in the caller's transaction: success, a retry, or
 * a failure for good (which, with `on_failure: abort`, aborts the rest of the pipeline); then
 * ends the pipeline when nothing of it is left to run. An attempt already ended by someone
 * else (an abort) changes nothing. Returns the tasks it aborted, and whether it unblocked
 * dependents (which may run now).
 */
export async function completeAttempt(
  tx: Tables,
  task: Schemas['Task'],
  end: AttemptEnd,
  now: Date,
): Promise<{ aborted: string[]; unblocked: boolean }> {
  const time = formatTime(now);
  const attempt = task.retry;
  let aborted: string[] = [];
  let unblocked = false;
  // A task nothing depends on (most of them) has nothing to unblock: no statement for it.
  if (end.outcome === 'succeeded') {
    const dependents = await tx.tasks.markSuccessful(task.id, attempt, time);
    unblocked = dependents !== undefined && dependents.length > 0;
    if (unblocked) await tx.tasks.unblockDependents(task.id);
  } else {
    const next = afterFailure({ ...task.pipeline_task, retry: attempt });
    if (next.action === 'retry') {
      const notBefore = formatTime(new Date(now.getTime() + next.delaySeconds * 1000));
      await tx.tasks.scheduleRetry(task.id, attempt, notBefore, end.message);
    } else {
      const dependents = await tx.tasks.markFailed(task.id, attempt, time, end.message);
      // `on_failure: continue` lets the dependents run; `abort` ends everything left.
      if (dependents && next.abortPipeline) aborted = await tx.tasks.abortUnfinished(task.pipeline_id, time);
      else if (dependents?.length) {
        unblocked = true;
        await tx.tasks.unblockDependents(task.id);
      }
    }
  }
  await settlePipeline(tx, task.pipeline_id, time);
  return { aborted, unblocked };
}
