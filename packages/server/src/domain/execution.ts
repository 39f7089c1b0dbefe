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

/** How many tasks of a pipeline are unfinished, and how many did not (or not yet) succeed. */
export interface TaskTally {
  unfinished: number;
  unsuccessful: number;
}

/**
 * The status a pipeline ends with once none of its tasks is unfinished; undefined while
 * some still are. Any failed or aborted task fails the pipeline.
 */
export function finalPipelineStatus(tally: TaskTally): 'successful' | 'failed' | undefined {
  if (tally.unfinished > 0) return undefined;
  return tally.unsuccessful === 0 ? 'successful' : 'failed';
}

export interface TaskNode {
  id: string;
  name: string;
  status: Status;
  dependencies: readonly string[];
}

/**
 * What restart_from_failure runs again: the failed and aborted tasks, and every task that
 * depends on one of them, directly or not (by pipeline entry name, all instances).
 */
export function tasksToRerun(tasks: readonly TaskNode[]): string[] {
  const rerun = new Set(
    tasks.filter((t) => t.status === 'failed' || t.status === 'aborted').map((t) => t.name),
  );
  let grew = true;
  while (grew) {
    grew = false;
    for (const task of tasks) {
      if (!rerun.has(task.name) && task.dependencies.some((name) => rerun.has(name))) {
        rerun.add(task.name);
        grew = true;
      }
    }
  }
  return tasks.filter((t) => rerun.has(t.name)).map((t) => t.id);
}
