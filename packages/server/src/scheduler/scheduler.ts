import type { Schemas } from '@pipewright/types';
import type { SecretBox } from '../domain/secrets/secret-box.js';
import { formatTime } from '../domain/time.js';
import type { Logger } from '../logger.js';
import type { Runner } from '../runner/index.js';
import type { WorkNotifier } from '../services/index.js';
import type { Store, Tables, Transaction } from '../store/index.js';
import { type AttemptContext, runAttempt } from './attempt-run.js';
import { type Claim, claimTask } from './claim.js';
import { createPendingInstantiations } from './pending-instantiations.js';
import { recoverInterruptedTasks, removeInterruptedContainers } from './recovery.js';
import { createRunningTasks } from './running-tasks.js';
import type { StepRecorder } from './step-recorder.js';
import { type AttemptEnd, completeAttempt } from './task-completion.js';
import type { ServerAccess } from './task-environment.js';
import { createWorkLoop } from './work-loop.js';

export type { ServerAccess } from './task-environment.js';

export interface SchedulerOptions {
  /** Tasks running at once in this process. */
  maxRunningTasks: number;
  /** Seconds an attempt of a task without a `timeout` of its own may run; none: no limit. */
  defaultTaskTimeoutSeconds?: number | undefined;
  /** Programs the server gives its tasks (its `pipewright`): a directory first on their PATH. */
  taskBinDir?: string | undefined;
  /** Safety net: look for work this often even without a wake-up. */
  pollIntervalMs?: number;
  /** Opens the identities tasks name: the server's identity key, the one the services seal them with. */
  secrets: SecretBox;
  /**
   * Told after the scheduler commits what live streams show (a task claimed or ended, step
   * output), so that they show it at once rather than at their next look.
   */
  committed?: () => void;
}

/**
 * The worker loop: claims runnable tasks (each claim committed before any process is
 * spawned), runs them through the runner, and records how they end. Woken after every
 * enqueue; also wakes itself when a retry is due, and polls slowly as a safety net. It starts
 * and stops the runner it is given.
 */
export function createScheduler(
  store: Store,
  runner: Runner,
  options: SchedulerOptions,
  logger: Logger,
  clock: () => Date = () => new Date(),
) {
  const running = createRunningTasks(() => loop.wakeUp());
  const loop = createWorkLoop({
    pass: () => fill(),
    nextDueTime: () => store.tasks.nextDueTime(),
    clock,
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    logger,
  });
  const { wakeUp } = loop;
  const completePendingInstantiations = createPendingInstantiations(store, logger, wakeUp);
  let access: ServerAccess = { apiUrl: '' };
  const committed = options.committed ?? (() => {});
  const attempts: AttemptContext = {
    store,
    runner,
    logger,
    secrets: options.secrets,
    access: () => access,
    taskBinDir: options.taskBinDir,
    defaultTaskTimeoutSeconds: options.defaultTaskTimeoutSeconds,
    committed,
  };

  /** Claims the oldest runnable task, in the caller's transaction. */
  const claim = (tx: Tables) => claimTask(tx, formatTime(clock()), running.ids());

  /** One pass of the loop: claims and launches runnable tasks while there is room for them. */
  const fill = async () => {
    await completePendingInstantiations();
    while (running.size < options.maxRunningTasks && runner.canPrepare()) {
      const claimed = await store.transaction(claim);
      if (!claimed) return;
      committed();
      launch(claimed);
    }
  };

  /**
   * Claims a task in the place of one ending, inside the transaction `tx` that ends it. A claim
   * that fails is undone alone, and left to the loop, which backs off.
   */
  const claimInPlaceOf = async (tx: Transaction): Promise<Claim | undefined> => {
    // `running` still holds the task ending.
    if (loop.stopped || running.size > options.maxRunningTasks || !runner.canPrepare()) return undefined;
    try {
      return await tx.savepoint(() => claim(tx));
    } catch {
      return undefined;
    }
  };

  const launch = (claimed: Claim) => {
    const { task } = claimed;
    running.add(task.id, (signal) =>
      runAttempt(attempts, claimed, signal, (end, recorder) => complete(task, end, recorder)).catch(
        (error: unknown) => logger.error('task run failed', { task_id: task.id, error: String(error) }),
      ),
    );
  };

  /**
   * The attempt's last step, its end and the claim of a task in its place: one commit, and the
   * next task starts without waiting for a turn of the loop.
   */
  const complete = async (task: Schemas['Task'], end: AttemptEnd, recorder: StepRecorder) => {
    await recorder.settle();
    const { aborted, next } = await store.transaction(async (tx) => {
      await recorder.close(tx);
      return { aborted: await completeAttempt(tx, task, end, clock()), next: await claimInPlaceOf(tx) };
    });
    committed();
    stopTasks(aborted);
    if (next) launch(next);
  };

  const stopTasks = (taskIds: readonly string[]) => running.abort(taskIds);

  const notifier: WorkNotifier = { wakeUp, stopTasks };
  return {
    ...notifier,
    /** Starts running tasks, which reach the server as `serverAccess` says. */
    start(serverAccess: ServerAccess) {
      access = serverAccess;
      // Up before the first task, which would otherwise wait for its spawner to boot.
      runner.start({
        onReady: wakeUp,
        onReapFailed: (error) =>
          logger.error('task users cannot be reaped: tasks wait until they can', { error: String(error) }),
      });
      // What a previous server's tasks left running (as task users, in containers) goes before any task starts.
      void Promise.all([
        runner.sweepTaskUsers(),
        removeInterruptedContainers(runner, logger),
        recoverInterruptedTasks(store, runner, logger, clock()),
      ]).then(([swept]) => {
        if (!swept) logger.warn('processes of task users keep appearing; they are swept again later');
        loop.start();
      });
    },
    /** Claims nothing more, waits for running tasks up to the deadline, then aborts them; then stops the runner. */
    async stop(deadlineMs: number) {
      loop.stop();
      await running.settle(deadlineMs);
      await runner.stop();
    },
    get runningCount() {
      return running.size;
    },
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
