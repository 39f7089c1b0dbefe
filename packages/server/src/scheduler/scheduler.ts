import type { Schemas } from '@pipewright/types';
import { formatKey, hashSecret, makeSecret } from '../domain/api-keys.js';
import { newId } from '../domain/ids.js';
import type { SecretBox } from '../domain/secret-box.js';
import { formatTime } from '../domain/time.js';
import type { Logger } from '../logger.js';
import { type ContainerContext, type ContainerEngine, containerLabels } from '../runner/index.js';
import { spawner } from '../runner/spawner.js';
import { createTaskUsers, type TaskUser, type UidRange } from '../runner/task-users.js';
import type { RunOutcome, RunRequest, Runtime, TaskTimeout } from '../runner/types.js';
import { completeInstantiations, type WorkNotifier } from '../services/index.js';
import type { Store } from '../store/index.js';
import { type Attempt, createAttemptDirectories } from './attempt-directories.js';
import { recoverInterruptedTasks, removeInterruptedContainers } from './recovery.js';
import { createStepRecorder } from './step-recorder.js';
import { completeAttempt } from './task-completion.js';
import { contextDocument, taskEnvironment } from './task-environment.js';
import { maskedValues, readTaskIdentities, writeIdentityFiles } from './task-identities.js';

type Task = Schemas['Task'];

export const INTERRUPTED_BY_STOP = 'interrupted by a server stop';

/** Emptied attempt slots kept for reuse at most (attempt-directories.ts): empty directories. */
const IDLE_ATTEMPT_SLOTS = 256;

export interface SchedulerOptions {
  /** Tasks running at once in this process. */
  maxRunningTasks: number;
  /** After SIGTERM, how long an aborted step has before SIGKILL. */
  graceMs: number;
  /** Output kept per step. */
  outputLimitBytes: number;
  /** Seconds an attempt of a task without a `timeout` of its own may run; none: no limit. */
  defaultTaskTimeoutSeconds?: number | undefined;
  /** Where task working directories and context files are made. */
  workRoot: string;
  /** Programs the server gives its tasks (its `pipewright`): a directory first on their PATH. */
  taskBinDir?: string | undefined;
  /** Safety net: look for work this often even without a wake-up. */
  pollIntervalMs?: number;
  /**
   * Each running task gets a user of this range, reaped when it ends (see runner/task-users.ts).
   * Without it, tasks run as the server's own user.
   */
  taskUsers?: UidRange | undefined;
  /**
   * How tasks of the `container` runtime run: the engine (none: their steps cannot start), and
   * this server's instance, a label of each container, by which a restart finds those a crash
   * left. One per data directory, the same across restarts.
   */
  container?: { engine: ContainerEngine | undefined; instance: string } | undefined;
  /** Opens the identities tasks name: the server's identity key, the one the services seal them with. */
  secrets: SecretBox;
}

/** How tasks reach the server, known once it listens. */
export interface ServerAccess {
  /** What tasks get as PIPEWRIGHT_API_URL: the server, without /v0. */
  apiUrl: string;
  /** The server's certificate file, when self-signed. */
  caFile?: string | undefined;
}

export type RunSteps = (request: RunRequest) => Promise<RunOutcome>;

interface Running {
  controller: AbortController;
  done: Promise<void>;
}

/** A task claimed to run, with the API key it runs with and what it was started by. */
interface Claim {
  task: Task;
  apiKey: string;
  /** Read in the claim's transaction (one transaction instead of four); undefined if it vanished. */
  origin:
    | { project: Schemas['Project']; event: Schemas['Event']; environment: Record<string, string> }
    | undefined;
}

function runtimeOf(task: Task): Runtime {
  const runtime = task.spec.data.runtime;
  if (runtime?.name !== 'container') return { name: 'local' };
  const parameters = runtime.parameters;
  // Installs require an image for the container runtime.
  if (!parameters?.image) throw new Error('the container runtime has no image');
  return {
    name: 'container',
    image: parameters.image,
    pull: parameters.pull ?? 'missing',
    memoryMib: parameters.memory,
    cpus: parameters.cpus,
    network: parameters.network ?? true,
  };
}

/** An attempt's time: the task's own timeout, else the server's default, if any. */
function timeoutOf(task: Task, serverDefault: number | undefined): TaskTimeout | undefined {
  const own = task.spec.data.timeout;
  if (own !== undefined) return { seconds: own, source: 'task' };
  return serverDefault === undefined ? undefined : { seconds: serverDefault, source: 'server' };
}

/**
 * The worker loop: claims runnable tasks (each claim committed before any process is
 * spawned), runs them through the runner, and records how they end. Woken after every
 * enqueue; also wakes itself when a retry is due, and polls slowly as a safety net.
 */
export function createScheduler(
  store: Store,
  runSteps: RunSteps,
  options: SchedulerOptions,
  logger: Logger,
  clock: () => Date = () => new Date(),
) {
  const running = new Map<string, Running>();
  const attempts = createAttemptDirectories(
    options.workRoot,
    options.taskUsers !== undefined,
    // Slots wait for their user's reap (up to 100 ms) before they are reused: enough for the
    // trivial tasks ending meanwhile.
    IDLE_ATTEMPT_SLOTS,
  );
  // Users ready: enough for every task to start at once, and for those starting while more are
  // reaped. A task waiting for one starts once they are.
  const users =
    options.taskUsers &&
    createTaskUsers(options.taskUsers, {
      ahead: Math.max(32, 4 * options.maxRunningTasks),
      onReady: () => wakeUp(),
      onReapFailed: (error) =>
        logger.error('task users cannot be reaped: tasks wait until they can', { error: String(error) }),
    });
  /** Whether a task claimed now gets a user at once (without task users, always). */
  const userReady = () => !users || users.available > 0;
  let stopping = false;
  let started = false;
  let drainQueued = false;
  let dueTimer: NodeJS.Timeout | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let failures = 0;
  let access: ServerAccess = { apiUrl: '' };
  let releaseSpawner: (() => Promise<void>) | undefined;

  /** Claims the oldest runnable task, in the caller's transaction. */
  const claim = (): Claim | undefined => {
    const now = formatTime(clock());
    // A task still ending here (aborted, then restarted) waits for its run to end: that run's end,
    // which names the attempt, would otherwise be taken for the new run's (both are attempt 0).
    const task = store.tasks.nextRunnable(now, [...running.keys()]);
    if (!task) return undefined;
    store.tasks.markStarted(task.id, now);
    store.pipelines.markStarted(task.pipeline_id, now);
    const keyId = newId();
    const secret = makeSecret();
    store.taskKeys.insert(keyId, task.id, hashSecret(secret));
    const pipeline = store.pipelines.runContext(task.pipeline_id);
    const project = store.projects.get(task.org_id, task.project_id);
    const event = pipeline && store.events.get(task.project_id, pipeline.event_id);
    return {
      task: { ...task, status: 'started', start_time: now },
      apiKey: formatKey({ kind: 'task', id: keyId, secret }),
      origin: pipeline && project && event && { project, event, environment: pipeline.environment },
    };
  };

  /** Claims one runnable task and launches it; false when there is none. */
  const processOne = (): boolean => {
    const claimed = store.transaction(claim);
    if (!claimed) return false;
    launch(claimed);
    return true;
  };

  /**
   * Claims a task in the place of one ending, inside the transaction that ends it. A claim that
   * fails is left to the loop, which backs off.
   */
  const claimInPlaceOf = (): Claim | undefined => {
    // `running` still holds the task ending.
    if (stopping || running.size > options.maxRunningTasks || !userReady()) return undefined;
    try {
      return store.transaction(claim);
    } catch {
      return undefined;
    }
  };

  /**
   * Writes the rest of the tasks of pipelines left half created by a crash, or by a failure of
   * the request that made them (services/instantiation.ts), one completion at a time.
   */
  let completing = false;
  const completePendingInstantiations = () => {
    if (completing) return;
    const pending = store.pipelines.pendingInstantiationIds();
    if (pending.length === 0) return;
    completing = true;
    completeInstantiations(store, pending)
      .then(wakeUp, (error: unknown) =>
        logger.error('failed to create the tasks of a pipeline', { error: String(error) }),
      )
      .finally(() => {
        completing = false;
      });
  };

  const drain = () => {
    drainQueued = false;
    if (stopping) return;
    try {
      completePendingInstantiations();
      while (running.size < options.maxRunningTasks && userReady() && processOne()) {
        // claimed one; look for the next
      }
      failures = 0;
    } catch (error) {
      // Back off (up to 10 s) rather than spin on a broken database.
      failures += 1;
      logger.error('scheduler failed to claim work', { error: String(error) });
      setTimeout(wakeUp, Math.min(10_000, 100 * 2 ** failures)).unref();
      return;
    }
    armDueTimer();
  };

  const wakeUp = () => {
    if (!started || stopping || drainQueued) return;
    drainQueued = true;
    setImmediate(drain);
  };

  /** Wakes up when the earliest retry becomes due. */
  const armDueTimer = () => {
    if (dueTimer) clearTimeout(dueTimer);
    dueTimer = undefined;
    const due = store.tasks.nextDueTime();
    if (!due) return;
    const delay = Math.max(0, Date.parse(due) - clock().getTime());
    dueTimer = setTimeout(wakeUp, Math.min(delay, 2 ** 31 - 1));
    dueTimer.unref();
  };

  const launch = (claimed: Claim) => {
    const { task } = claimed;
    const controller = new AbortController();
    const done = runTask(claimed, controller.signal)
      .catch((error) => logger.error('task run failed', { task_id: task.id, error: String(error) }))
      .finally(() => {
        running.delete(task.id);
        wakeUp();
      });
    running.set(task.id, { controller, done });
  };

  const runTask = async ({ task, apiKey, origin }: Claim, signal: AbortSignal) => {
    // Their values are masked in the output of the steps.
    const named = readTaskIdentities(store, options.secrets, task, origin?.project);
    const recorder = createStepRecorder(
      store,
      { taskId: task.id, attempt: task.retry, start: task.start_time ?? '' },
      task.spec.data.steps.map((s) => s.label),
      (error) =>
        logger.error('step output could not be stored yet', { task_id: task.id, error: String(error) }),
      maskedValues(named),
    );
    let outcome: RunOutcome;
    let user: TaskUser | undefined;
    let attempt: Attempt | undefined;
    try {
      user = users?.take();
      if (!origin) throw new Error(`pipeline ${task.pipeline_id} vanished`);
      if ('problem' in named) throw new Error(named.problem);
      attempt = attempts.take(JSON.stringify(contextDocument(task, origin.event)), user);
      writeIdentityFiles(named.identities, attempt.tmpDir, user);
      const runtime = runtimeOf(task);
      outcome = await runSteps({
        steps: task.spec.data.steps,
        runtime,
        container: runtime.name === 'container' ? containerContext(task, attempt) : undefined,
        environment: taskEnvironment({
          task,
          project: origin.project,
          pipelineEnvironment: origin.environment,
          attempt,
          apiUrl: access.apiUrl,
          apiKey,
          caFile: access.caFile,
          binDir: options.taskBinDir,
          inContainer: runtime.name === 'container',
          identities: named.identities,
        }),
        workDir: attempt.workDir,
        scriptDir: attempt.dir,
        user,
        signal,
        graceMs: options.graceMs,
        timeout: timeoutOf(task, options.defaultTaskTimeoutSeconds),
        outputLimitBytes: options.outputLimitBytes,
        sink: recorder,
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      outcome = { outcome: 'failed', stepIndex: -1, message: `the task could not run: ${reason}` };
    }
    // An aborted run was stopped by a pipeline abort (already recorded: this changes
    // nothing) or by a server stop, which ends the attempt as a restart would. A run that timed
    // out failed, and is retried as any failure is.
    const end =
      outcome.outcome === 'succeeded'
        ? ({ outcome: 'succeeded' } as const)
        : ({
            outcome: 'failed',
            message: outcome.outcome === 'aborted' ? INTERRUPTED_BY_STOP : outcome.message,
          } as const);
    // The attempt's last step, its end and the claim of a task in its place: one commit, and
    // the next task starts without waiting for a turn of the loop.
    let next: Claim | undefined;
    try {
      const aborted = store.transaction(() => {
        recorder.close();
        const stopped = completeAttempt(store, task, end, clock());
        next = claimInPlaceOf();
        return stopped;
      });
      stopTasks(aborted);
      if (next) launch(next);
    } finally {
      // Once the next task is on its way. Its slot is renewed once nothing of it runs: a container
      // outlives its engine's client, which is all a reap kills.
      const swept = user && users?.giveBack(user);
      const container = task.spec.data.runtime?.name === 'container';
      if (attempt) attempts.giveBack(attempt, container ? undefined : swept);
    }
  };

  const containerContext = (task: Task, attempt: Attempt): ContainerContext => ({
    engine: options.container?.engine,
    labels: containerLabels(options.container?.instance ?? '', task.id, task.retry),
    files: { tmpDir: attempt.tmpDir, contextPath: attempt.contextPath, caFile: access.caFile },
  });

  const stopTasks = (taskIds: readonly string[]) => {
    for (const id of taskIds) running.get(id)?.controller.abort();
  };

  const notifier: WorkNotifier = { wakeUp, stopTasks };
  return {
    ...notifier,
    /** Starts running tasks, which reach the server as `serverAccess` says. */
    start(serverAccess: ServerAccess) {
      access = serverAccess;
      // Up before the first task, which would otherwise wait for it to boot.
      releaseSpawner = spawner.hold();
      recoverInterruptedTasks(store, logger, clock());
      const { engine, instance } = options.container ?? {};
      // What a previous server's tasks left running (as task users, in containers) goes before any task starts.
      void Promise.all([
        users?.sweepAll() ?? Promise.resolve(true),
        engine && instance !== undefined && removeInterruptedContainers(engine, instance, logger),
      ]).then(([swept]) => {
        if (!swept) logger.warn('processes of task users keep appearing; they are swept again later');
        if (stopping) return;
        started = true;
        pollTimer = setInterval(wakeUp, options.pollIntervalMs ?? 1000);
        pollTimer.unref();
        wakeUp();
      });
    },
    /** Claims nothing more, waits for running tasks up to the deadline, then aborts them. */
    async stop(deadlineMs: number) {
      stopping = true;
      if (dueTimer) clearTimeout(dueTimer);
      if (pollTimer) clearInterval(pollTimer);
      const all = () => Promise.all([...running.values()].map((r) => r.done));
      const deadline = new Promise<'late'>((resolve) =>
        setTimeout(() => resolve('late'), deadlineMs).unref(),
      );
      if ((await Promise.race([all(), deadline])) === 'late') {
        stopTasks([...running.keys()]);
        await all();
      }
      await attempts.close();
      users?.close();
      await releaseSpawner?.();
    },
    get runningCount() {
      return running.size;
    },
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
