import { type Attempt, createAttemptDirectories } from './attempt-directories.js';
import { type ContainerEngine, containerLabels } from './container.js';
import { removeStaleContainers } from './container-removal.js';
import { type RecordedGroupStop, stopRecordedGroup } from './process-identity.js';
import { runSteps } from './run-steps.js';
import { createSpawner } from './spawner.js';
import { createTaskUsers, type TaskUser, type UidRange } from './task-users.js';
import type { ContainerContext, RunOutcome, RunSink, Runtime, Step, TaskTimeout } from './types.js';

/** Emptied attempt slots kept for reuse at most (attempt-directories.ts): empty directories. */
const IDLE_ATTEMPT_SLOTS = 256;

export interface RunnerOptions {
  /** Where attempts get their directories: the runner's alone, emptied by the program at start. */
  workRoot: string;
  /** Attempts running at once at most (the scheduler's limit): task users are kept ready for them. */
  maxRunningTasks: number;
  /** After SIGTERM, how long an aborted step has before SIGKILL. */
  graceMs: number;
  /** Output kept per step. */
  outputLimitBytes: number;
  /**
   * Each attempt gets a user of this range, reaped when it ends (see task-users.ts). Without it,
   * steps run as the server's own user.
   */
  taskUsers?: UidRange | undefined;
  /**
   * How steps of the `container` runtime run: the engine (none: they cannot start), and this
   * server's instance, a label of each container, by which a restart finds those a crash left.
   * One per data directory, the same across restarts.
   */
  container?: { engine: ContainerEngine | undefined; instance: string } | undefined;
}

/** What the runner tells the scheduler while it works. */
export interface RunnerEvents {
  /** Task users became ready: an attempt may have waited for one. */
  onReady(): void;
  /** Task users cannot be reaped, after they could (or at first): none is handed out until they can. */
  onReapFailed(error: unknown): void;
}

/** The place of one attempt of a task: its directories (attempt-directories.ts) and its user. */
export interface PreparedAttempt extends Attempt {
  /** The task user its processes run as, who owns its working directory; none: the server's own. */
  user: TaskUser | undefined;
}

/** What runs in a prepared attempt. */
export interface AttemptRun {
  /** The task and the number of its attempt, which label the attempt's containers. */
  taskId: string;
  attempt: number;
  steps: Step[];
  runtime: Runtime;
  /** The complete environment of every process (see RunRequest). */
  environment: Record<string, string>;
  /** The server's certificate file, when self-signed: mounted in the attempt's containers. */
  caFile?: string | undefined;
  /** Aborting it stops the run (see RunRequest). */
  signal: AbortSignal;
  timeout?: TaskTimeout | undefined;
  sink: RunSink;
}

/**
 * The place where steps run, and everything about it: the spawner process that starts the
 * steps' processes, task users and their reaping, the attempt directories of the work root,
 * containers, and what a crashed server left of these. Made by the composition root, used by
 * the scheduler, which starts and stops it.
 */
export interface Runner {
  /** Starts the spawner process (the first step does not wait for it to boot); reports to `events` from now on. */
  start(events: RunnerEvents): void;
  /** Kills every process a previous server's task users left; false when they kept appearing (true without task users). */
  sweepTaskUsers(): Promise<boolean>;
  /** Removes the containers a previous server of this instance left; resolves to how many (none without an engine). */
  removeStaleContainers(): Promise<number>;
  /** Stops a process group of a step that a dead server recorded as running, while it still is that group. */
  stopLeftProcessGroup(group: number, identity: string | undefined): RecordedGroupStop;
  /** Whether prepareAttempt gets a task user at once now (without task users, always). */
  canPrepare(): boolean;
  /** The place of an attempt starting now, its context file holding `context`; throws when it cannot be made. */
  prepareAttempt(context: string): PreparedAttempt;
  /** Runs the steps of a prepared attempt, to their end. */
  run(attempt: PreparedAttempt, run: AttemptRun): Promise<RunOutcome>;
  /** The attempt has ended: its user is reaped, its directories renewed for a later attempt or removed. */
  releaseAttempt(attempt: PreparedAttempt): void;
  /** Once no attempt runs: removes the attempts' directories, then stops the reaper and the spawner process. */
  stop(): Promise<void>;
}

export function createRunner(options: RunnerOptions): Runner {
  const spawner = createSpawner();
  // Slots wait for their user's reap (up to 100 ms) before they are reused: enough for the
  // trivial tasks ending meanwhile.
  const directories = createAttemptDirectories(
    spawner,
    options.workRoot,
    options.taskUsers !== undefined,
    IDLE_ATTEMPT_SLOTS,
  );
  let events: RunnerEvents | undefined;
  // Users ready: enough for every attempt to start at once, and for those starting while more are
  // reaped. An attempt waiting for one starts once they are (onReady).
  const users =
    options.taskUsers &&
    createTaskUsers(options.taskUsers, {
      ahead: Math.max(32, 4 * options.maxRunningTasks),
      onReady: () => events?.onReady(),
      onReapFailed: (error) => events?.onReapFailed(error),
    });
  /** Attempts that ran in containers: a container outlives its engine's client, which is all a reap kills. */
  const inContainers = new WeakSet<PreparedAttempt>();
  let releaseSpawner: (() => Promise<void>) | undefined;

  const containerContext = (attempt: PreparedAttempt, run: AttemptRun): ContainerContext => ({
    engine: options.container?.engine,
    labels: containerLabels(options.container?.instance ?? '', run.taskId, run.attempt),
    files: { tmpDir: attempt.tmpDir, contextPath: attempt.contextPath, caFile: run.caFile },
  });

  return {
    start(reportTo) {
      events = reportTo;
      releaseSpawner = spawner.hold();
    },
    sweepTaskUsers: () => users?.sweepAll() ?? Promise.resolve(true),
    removeStaleContainers() {
      const { engine, instance } = options.container ?? {};
      if (!engine || instance === undefined) return Promise.resolve(0);
      return removeStaleContainers(spawner, engine, instance);
    },
    stopLeftProcessGroup: stopRecordedGroup,
    canPrepare: () => !users || users.available > 0,
    prepareAttempt(context) {
      const user = users?.take();
      try {
        return { ...directories.take(context, user), user };
      } catch (error) {
        if (user) void users?.giveBack(user);
        throw error;
      }
    },
    run(attempt, run) {
      const inContainer = run.runtime.name === 'container';
      if (inContainer) inContainers.add(attempt);
      return runSteps(spawner, {
        steps: run.steps,
        runtime: run.runtime,
        container: inContainer ? containerContext(attempt, run) : undefined,
        environment: run.environment,
        workDir: attempt.workDir,
        scriptDir: attempt.dir,
        user: attempt.user,
        signal: run.signal,
        graceMs: options.graceMs,
        timeout: run.timeout,
        outputLimitBytes: options.outputLimitBytes,
        sink: run.sink,
      });
    },
    releaseAttempt(attempt) {
      // The slot is renewed once nothing of the attempt runs any more: once its user is reaped,
      // unless containers ran there.
      const reaped = attempt.user && users?.giveBack(attempt.user);
      directories.giveBack(attempt, inContainers.has(attempt) ? undefined : reaped);
    },
    async stop() {
      await directories.close();
      users?.close();
      await releaseSpawner?.();
    },
  };
}
