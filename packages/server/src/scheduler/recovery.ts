import type { Schemas } from '@pipewright/types';
import { formatTime } from '../domain/time.js';
import type { Logger } from '../logger.js';
import type { Runner } from '../runner/index.js';
import type { Store } from '../store/index.js';
import { completeAttempt } from './task-completion.js';

export const INTERRUPTED_BY_RESTART = 'interrupted by a server restart';
export const INTERRUPTED_BY_LOST_SERVER = 'interrupted: the server running it stopped renewing its lease';

/**
 * After a crash, before taking work: stops the step processes this server's previous run left
 * running (its spawner process stops them when only the server died; these are left when it
 * was killed too), by process group, each only while its number still names the recorded
 * leader (see Runner.stopLeftProcessGroup). Only those of tasks of instance `instance`, this
 * server's name: the others' ran on other machines.
 */
export async function stopLeftProcesses(
  store: Store,
  runner: Runner,
  logger: Logger,
  instance: string,
): Promise<void> {
  for (const { group, identity } of await store.stepExecutions.runningProcessGroups(instance)) {
    const stop = runner.stopLeftProcessGroup(group, identity);
    // A group already gone with the previous server needs no word.
    if (stop === 'spared') {
      logger.warn('spared a recorded process group: its leader has ended, or the host restarted', {
        process_group: group,
      });
    } else if (stop === 'stopped') {
      logger.warn('stopped a step process left by a previous server', { process_group: group });
    }
  }
}

/** Ends the leases that have expired: their instances' tasks are left behind (see below). */
export async function endExpiredLeases(store: Store, logger: Logger): Promise<void> {
  for (const id of await store.serverInstances.expired()) {
    // Another server may end it first: one says so.
    if (await store.serverInstances.removeExpired(id)) {
      logger.warn('a server instance stopped renewing its lease: its tasks are ended', { instance: id });
    }
  }
}

/**
 * Ends, as failures that retry them when they have retries left, the attempts of the tasks
 * marked started that nothing runs: those of instances without a lease, and those of instance
 * `instance` (the caller) not among its `running()` ones. Each is read again in the transaction
 * that ends it, and left if it moved meanwhile. Returns how many it ended.
 */
export async function endLeftBehindTasks(
  store: Store,
  left: { instance: string; running: () => string[] },
  logger: Logger,
  now: Date,
  message: string,
): Promise<number> {
  let ended = 0;
  for (const task of await store.tasks.leftBehind(left.instance, left.running())) {
    const still = await store.transaction(async (tx) => {
      const [state] = await tx.tasks.runStates([task.id]);
      if (!state || !sameAttempt(task, state) || left.running().includes(task.id)) return false;
      await tx.stepExecutions.abortStarted(task.id, formatTime(now));
      await completeAttempt(tx, task, { outcome: 'failed', message }, now);
      return true;
    });
    if (!still) continue;
    ended += 1;
    logger.warn(message, { task_id: task.id, pipeline_id: task.pipeline_id });
  }
  return ended;
}

/** Whether `state`, read since, is still the started attempt of `task` that was read. */
function sameAttempt(
  task: Schemas['Task'],
  state: { status: string; retry: number; run: number; server_instance: string | null },
): boolean {
  return state.status === 'started' && state.retry === task.retry && state.run === task.run;
}

/**
 * After a crash, before taking work: removes the containers of steps the dead server left (the
 * spawner kills their engine clients, which leaves the containers running), found by the label
 * of this server's instance. A failure is logged: those containers run on, and tasks still start.
 */
export async function removeInterruptedContainers(runner: Runner, logger: Logger): Promise<void> {
  try {
    const removed = await runner.removeStaleContainers();
    if (removed > 0) logger.warn('removed containers left by a previous server', { containers: removed });
  } catch (error) {
    logger.error('could not remove the containers a previous server left', { error: String(error) });
  }
}
