import { formatTime } from '../domain/time.js';
import type { Logger } from '../logger.js';
import type { Runner } from '../runner/index.js';
import type { Store } from '../store/index.js';
import { completeAttempt } from './task-completion.js';

export const INTERRUPTED_BY_RESTART = 'interrupted by a server restart';

/**
 * After a crash, before taking work: stops the step processes the dead server left running
 * (its spawner process stops them when only the server died; these are left when it was
 * killed too), by process group, each only while its number still names the recorded leader
 * (see Runner.stopLeftProcessGroup); then ends the attempts of its tasks as failures, which
 * retries them when they have retries left.
 * One server process per database is assumed: another's running tasks would look dead.
 */
export async function recoverInterruptedTasks(
  store: Store,
  runner: Runner,
  logger: Logger,
  now: Date,
): Promise<void> {
  for (const { group, identity } of await store.stepExecutions.runningProcessGroups()) {
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
  for (const task of await store.tasks.started()) {
    await store.transaction(async (tx) => {
      await tx.stepExecutions.abortStarted(task.id, formatTime(now));
      await completeAttempt(tx, task, { outcome: 'failed', message: INTERRUPTED_BY_RESTART }, now);
    });
    logger.warn('task interrupted by a server restart', { task_id: task.id, pipeline_id: task.pipeline_id });
  }
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
