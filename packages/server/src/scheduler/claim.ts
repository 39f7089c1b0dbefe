import type { Schemas } from '@pipewright/types';
import type { Tables } from '../store/index.js';
import { issueTaskKey } from './task-keys.js';

type Task = Schemas['Task'];

/** A task claimed to run, with the API key it runs with and what it was started by. */
export interface Claim {
  task: Task;
  apiKey: string;
  /** Read in the claim's transaction (one transaction instead of four); undefined if it vanished. */
  origin:
    | { project: Schemas['Project']; event: Schemas['Event']; environment: Record<string, string> }
    | undefined;
}

/**
 * Claims the oldest task runnable at `now` for server instance `instance`, in the caller's
 * transaction (see startClaimed). Tasks of `ending` are left: a task still ending here
 * (aborted, then restarted) waits for its run to end, whose end, which names the attempt, would
 * otherwise be taken for the new run's (both are attempt 0).
 */
export async function claimTask(
  tx: Tables,
  now: string,
  instance: string,
  ending: readonly string[],
): Promise<Claim | undefined> {
  const task = await tx.tasks.nextRunnable(now, ending);
  return task && startClaimed(tx, task, now, instance);
}

/**
 * Marks `task`, found runnable in the caller's transaction, and its pipeline started for
 * `instance`, and issues the key it runs with. Nothing is claimed if `instance` holds no lease.
 */
export async function startClaimed(
  tx: Tables,
  task: Task,
  now: string,
  instance: string,
): Promise<Claim | undefined> {
  if (!(await tx.tasks.markStarted(task.id, now, instance))) return undefined;
  await tx.pipelines.markStarted(task.pipeline_id, now);
  const apiKey = await issueTaskKey(tx, task.id);
  const run = await tx.pipelines.runContext(task.pipeline_id);
  const project = await tx.projects.get(task.org_id, task.project_id);
  return {
    task: { ...task, status: 'started', start_time: now },
    apiKey,
    origin: run && project && { project, event: run.event, environment: run.environment },
  };
}
