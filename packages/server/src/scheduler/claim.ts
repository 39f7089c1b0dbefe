import type { Schemas } from '@pipewright/types';
import type { Store } from '../store/index.js';
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
 * Claims the oldest task runnable at `now`, in the caller's transaction: marks it and its pipeline
 * started and issues the key it runs with. Tasks of `ending` are left: a task still ending here
 * (aborted, then restarted) waits for its run to end, whose end, which names the attempt, would
 * otherwise be taken for the new run's (both are attempt 0).
 */
export function claimTask(store: Store, now: string, ending: readonly string[]): Claim | undefined {
  const task = store.tasks.nextRunnable(now, ending);
  if (!task) return undefined;
  store.tasks.markStarted(task.id, now);
  store.pipelines.markStarted(task.pipeline_id, now);
  const apiKey = issueTaskKey(store, task.id);
  const pipeline = store.pipelines.runContext(task.pipeline_id);
  const project = store.projects.get(task.org_id, task.project_id);
  const event = pipeline && store.events.get(task.project_id, pipeline.event_id);
  return {
    task: { ...task, status: 'started', start_time: now },
    apiKey,
    origin: pipeline && project && event && { project, event, environment: pipeline.environment },
  };
}
