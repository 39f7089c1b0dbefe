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
 * transaction. Tasks of `ending` are left: a task still ending here (aborted, then restarted)
 * waits for its run to end, whose end, which names the attempt, would otherwise be taken for
 * the new run's (both are attempt 0). Nothing is claimed if `instance` holds no lease.
 */
export async function claimTask(
  tx: Tables,
  now: string,
  instance: string,
  ending: readonly string[],
): Promise<Claim | undefined> {
  // Its pipeline is started with it (migration 022).
  const task = await tx.tasks.claimNext(now, ending, instance);
  if (!task) return undefined;
  const apiKey = await issueTaskKey(tx, task.id);
  return { task, apiKey, origin: await tx.pipelines.runContext(task.pipeline_id) };
}
