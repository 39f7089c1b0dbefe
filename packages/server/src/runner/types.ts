import type { AttemptFiles, ContainerEngine } from './container.js';
import type { TaskUser } from './task-users.js';

/** One step of a task, as specified: exactly one of `command` and `code` (validated upstream). */
export interface Step {
  label?: string;
  command?: string;
  arguments?: string[];
  code?: string;
  /** Seconds the step may run: then it is stopped as an abort stops it, and the run times out. */
  timeout?: number;
}

/** Seconds an attempt of a task may run, and whose limit it is (failure messages name it). */
export interface TaskTimeout {
  seconds: number;
  /** The task's own `timeout`, or the server's default. */
  source: 'task' | 'server';
}

/** The `container` runtime of a task, as its spec says (defaults filled). */
export interface ContainerRuntime {
  name: 'container';
  image: string;
  pull: 'missing' | 'always' | 'never';
  memoryMib?: number | undefined;
  cpus?: number | undefined;
  /** The host's network, or none. */
  network: boolean;
}

export type Runtime = { name: 'local' } | ContainerRuntime;

/** What the server gives a run of the `container` runtime. */
export interface ContainerContext {
  /** The engine; none: container steps cannot start. */
  engine: ContainerEngine | undefined;
  /** Labels of every container of the run (containerLabels): the server's instance, task and attempt. */
  labels: Record<string, string>;
  /** The attempt's files, mounted inside (besides the working directory). */
  files: Omit<AttemptFiles, 'workDir'>;
}

export interface RunRequest {
  steps: Step[];
  runtime: Runtime;
  /** Required by the `container` runtime. */
  container?: ContainerContext | undefined;
  /**
   * The complete environment of every process: nothing is inherited from the server. Its PATH, or
   * DEFAULT_SEARCH_PATH when it has none, is where commands are looked up. In a container, the
   * image's PATH applies unless it sets one.
   */
  environment: Record<string, string>;
  /** An existing, empty directory (absolute path): the working directory of every step. The caller creates and removes it. */
  workDir: string;
  /**
   * An existing directory (absolute path) where the scripts of `code` steps are written. With a
   * task user, one it cannot write to, so that it cannot put a link where the runner writes.
   */
  scriptDir: string;
  /**
   * The task user every process of the run runs as; the working directory belongs to it, and so do
   * the files the runner writes there. The server's own user when absent.
   */
  user?: TaskUser | undefined;
  /** Aborting it stops the run: SIGTERM to the step's whole process group, SIGKILL after graceMs. */
  signal: AbortSignal;
  graceMs: number;
  /** Once it passes, the running step is stopped as an abort stops it, and the run times out. */
  timeout?: TaskTimeout | undefined;
  /** Output kept per step, in bytes; past it the output is cut and marked truncated. */
  outputLimitBytes: number;
  sink: RunSink;
}

/**
 * Where a run reports. Every reported step gets stepStarted, then its output, then stepEnded, a step
 * that could not start included. A sink method that throws stops the run: runSteps rejects with it.
 */
export interface RunSink {
  stepStarted(index: number, time: Date): void;
  /**
   * The step's process runs: `pid` also names its process group, `identity` its leader (both kept
   * to stop orphans after a crash). Told once it has run a while or before its first output: a
   * step that ends at once may never be.
   */
  processStarted?(index: number, pid: number, identity: string | undefined): void;
  /** Output as written, stdout and stderr interleaved in one stream, in UTF-8 chunks, never beyond the limit. Called while the step runs. */
  stepOutput(index: number, text: string): void;
  stepEnded(index: number, result: StepResult, time: Date): void;
}

export interface StepResult {
  /** `timed_out`: stopped as `aborted` is, because its step's or its task's timeout passed. */
  outcome: 'succeeded' | 'failed' | 'killed' | 'aborted' | 'timed_out' | 'not_started';
  /** When the process exited by itself. */
  exitCode?: number;
  /** When it was killed by a signal. */
  signal?: string;
  outputTruncated: boolean;
  /**
   * Why it failed: "exited with status 3", "was killed by signal SIGSEGV"; not_started: "command not
   * found: foo"; timed_out: "timed out: the step's timeout of 1 s passed".
   */
  message?: string;
}

export type RunOutcome =
  | { outcome: 'succeeded' }
  /**
   * `message` names the step and why it failed: 'step 2 "Build" exited with status 3', or which
   * timeout passed: 'step 2 "Build" timed out: the task\'s timeout of 10 min passed'.
   */
  | { outcome: 'failed' | 'timed_out'; stepIndex: number; message: string }
  | { outcome: 'aborted' };
