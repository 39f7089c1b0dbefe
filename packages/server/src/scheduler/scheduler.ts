import type { Schemas } from '@pipewright/types';
import type { SecretBox } from '../domain/secrets/secret-box.js';
import { formatTime } from '../domain/time.js';
import type { Logger } from '../logger.js';
import type { Runner } from '../runner/index.js';
import type { WorkNotifier } from '../services/index.js';
import type { Store, Tables, Transaction } from '../store/index.js';
import { type AttemptContext, runAttempt } from './attempt-run.js';
import { type Claim, claimTask } from './claim.js';
import { createInstanceLease } from './instance-lease.js';
import { createPendingInstantiations } from './pending-instantiations.js';
import {
  endExpiredLeases,
  endLeftBehindTasks,
  INTERRUPTED_BY_LOST_SERVER,
  INTERRUPTED_BY_RESTART,
  removeInterruptedContainers,
  stopLeftProcesses,
} from './recovery.js';
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
  /**
   * This server's name among the servers of the database (default `local`): the tasks it runs
   * name it, and a server that starts under a name ends at once what that name's previous run
   * left. No two servers may run under one name at once (apps/server locks it).
   */
  instance?: string | undefined;
  /**
   * How long this server's lease lasts unrenewed (default 15 s): the tasks of a server that
   * died are ended by another within about 1.2 times this (instance-lease.ts).
   */
  leaseMs?: number | undefined;
  /** Opens the identities tasks name: the server's identity key, the one the services seal them with. */
  secrets: SecretBox;
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
  const instance = options.instance ?? 'local';
  const running = createRunningTasks(() => loop.wakeUp());
  const leftBehind = { instance, running: running.ids };
  const lease = createInstanceLease(
    store,
    {
      instance,
      leaseMs: options.leaseMs ?? 15_000,
      stopRunning: () => running.abortAll(),
      // What other servers left: their expired leases, and the tasks of those.
      renewed: async () => {
        await endExpiredLeases(store, logger);
        if ((await endLeftBehindTasks(store, leftBehind, logger, clock(), INTERRUPTED_BY_LOST_SERVER)) > 0) {
          // Ended as failures: some may retry, due at their time.
          loop.dueTimeChanged();
        }
      },
    },
    logger,
  );
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const loop = createWorkLoop({
    pass: () => fill(),
    nextDueTime: () => store.tasks.nextDueTime(),
    clock,
    pollIntervalMs,
    logger,
  });
  const { wakeUp } = loop;
  const completePendingInstantiations = createPendingInstantiations(store, logger, wakeUp, pollIntervalMs);
  let access: ServerAccess = { apiUrl: '' };
  const attempts: AttemptContext = {
    store,
    runner,
    logger,
    secrets: options.secrets,
    access: () => access,
    taskBinDir: options.taskBinDir,
    defaultTaskTimeoutSeconds: options.defaultTaskTimeoutSeconds,
  };

  /** Claims the oldest runnable task, in the caller's transaction. */
  const claim = (tx: Tables) => claimTask(tx, formatTime(clock()), instance, running.ids());
  const roomToClaim = () => lease.held && running.size < options.maxRunningTasks && runner.canPrepare();

  /**
   * One pass of the loop: claims and launches runnable tasks while there is room for them. A
   * look that locks nothing comes before each claim: servers woken by another's commit mostly
   * find nothing, and so does the claim after the last task runnable; a claim's transaction
   * would hold the write lock for that (on PostgreSQL, three round trips).
   */
  const fill = async () => {
    await completePendingInstantiations();
    while (roomToClaim() && (await store.tasks.anyRunnable(formatTime(clock()), running.ids()))) {
      const claimed = await store.transaction(claim);
      if (!claimed) return;
      launch(claimed);
    }
  };

  /**
   * Claims a task in the place of one ending, inside the transaction `tx` that ends it, if one
   * may be runnable: `worthAClaim` says so (a look before the transaction, or dependents the end
   * unblocked). The loop, woken by the end, finds any other. A claim whose writes fail is undone
   * alone, and left to the loop, which backs off. The claim is one statement, in a savepoint
   * (two round trips on PostgreSQL), and none of them when nothing may be runnable.
   */
  const claimInPlaceOf = async (tx: Transaction, worthAClaim: boolean): Promise<Claim | undefined> => {
    // `running` still holds the task ending.
    if (
      !worthAClaim ||
      loop.stopped ||
      !lease.held ||
      running.size > options.maxRunningTasks ||
      !runner.canPrepare()
    ) {
      return undefined;
    }
    try {
      return await tx.savepoint(() => claim(tx));
    } catch {
      return undefined;
    }
  };

  const launch = (claimed: Claim) => {
    const { task } = claimed;
    running.add(task, (signal) =>
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
    // Without the lock: under load most ends find a task to start in their place.
    const runnable = await store.tasks.anyRunnable(formatTime(clock()), running.ids()).catch(() => false);
    const { aborted, next } = await store.transaction(async (tx) => {
      await recorder.close(tx);
      const { aborted, unblocked } = await completeAttempt(tx, task, end, clock());
      return { aborted, next: await claimInPlaceOf(tx, runnable || unblocked) };
    });
    // A failure may have scheduled a retry, due at its time.
    if (end.outcome === 'failed') loop.dueTimeChanged();
    stopTasks(aborted);
    if (next) launch(next);
  };

  const stopTasks = (taskIds: readonly string[]) => running.abort(taskIds);

  /**
   * Stops the runs whose attempts are no longer this server's to run: aborted or restarted
   * through another server, or ended by another that found this server's lease expired. One
   * look at a time, and one more after it if asked meanwhile.
   */
  let checking = false;
  let checkAgain = false;
  const checkRunning = async () => {
    checkAgain = true;
    if (checking) return;
    checking = true;
    try {
      while (checkAgain && running.size > 0) {
        checkAgain = false;
        const attempts = running.attempts();
        const states = new Map(
          (await store.tasks.runStates(attempts.map((a) => a.id))).map((state) => [state.id, state]),
        );
        const gone = attempts.filter(({ id, run, retry }) => {
          const state = states.get(id);
          return (
            state?.status !== 'started' ||
            state.run !== run ||
            state.retry !== retry ||
            state.server_instance !== instance
          );
        });
        stopTasks(gone.map((a) => a.id));
      }
    } catch (error) {
      logger.error('could not check the running tasks against the database', { error: String(error) });
    } finally {
      checking = false;
    }
  };

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
      // What this server's previous run left running (as task users, in containers) goes
      // before any task starts; then its lease, and the end of the tasks it had claimed.
      const recovered = Promise.all([
        runner.sweepTaskUsers(),
        removeInterruptedContainers(runner, logger),
        stopLeftProcesses(store, runner, logger, instance),
      ]).then(async ([swept]) => {
        if (!swept) logger.warn('processes of task users keep appearing; they are swept again later');
        await lease.take();
        await endLeftBehindTasks(store, leftBehind, logger, clock(), INTERRUPTED_BY_RESTART);
      });
      void recovered.then(
        () => {
          lease.start();
          loop.start();
        },
        (error: unknown) => {
          // The lease's renewals take it again, and the loop's passes claim once they can.
          logger.error('could not recover what the previous run left', { error: String(error) });
          lease.start();
          loop.start();
        },
      );
    },
    /** Another server committed: there may be work, and running attempts may have been aborted there. */
    commitElsewhere(): void {
      wakeUp();
      if (running.size > 0) void checkRunning();
    },
    /**
     * Claims nothing more, waits for running tasks up to the deadline, then aborts them; then
     * gives up its lease and stops the runner.
     */
    async stop(deadlineMs: number) {
      loop.stop();
      await running.settle(deadlineMs);
      await Promise.all([lease.stop(), runner.stop()]);
    },
    get runningCount() {
      return running.size;
    },
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
