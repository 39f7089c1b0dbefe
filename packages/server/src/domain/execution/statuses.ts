// Statuses of pipelines and tasks, and the decisions taken when a task ends.

export type Status = 'created' | 'started' | 'successful' | 'failed' | 'aborted';

const UNFINISHED: readonly Status[] = ['created', 'started'];

export function isFinished(status: Status): boolean {
  return !UNFINISHED.includes(status);
}

export interface FailurePolicy {
  retry: number;
  nb_retries?: number;
  retry_delay?: number;
  on_failure?: 'abort' | 'continue';
}

export type AfterFailure =
  | { action: 'retry'; delaySeconds: number }
  | { action: 'fail'; abortPipeline: boolean };

/** A failed task runs again while it has retries left; then it fails for good. */
export function afterFailure(task: FailurePolicy): AfterFailure {
  if (task.retry < (task.nb_retries ?? 0)) return { action: 'retry', delaySeconds: task.retry_delay ?? 0 };
  return { action: 'fail', abortPipeline: (task.on_failure ?? 'abort') === 'abort' };
}
