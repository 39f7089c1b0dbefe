import { spawner } from './spawner.js';
import type { TaskUser } from './task-users.js';

export interface ProcessOptions {
  /** argv[0] is the path of an executable already found (see findExecutable). */
  argv: string[];
  /** The process's whole environment. */
  environment: Record<string, string>;
  cwd: string;
  /** The task user the process runs as; the server's own user when absent. */
  user?: TaskUser | undefined;
  signal: AbortSignal;
  graceMs: number;
  /**
   * How much of the output the caller keeps: beyond it (and a few bytes that show it was passed), the
   * output is read and dropped. Without it, all of it reaches onOutput.
   */
  outputLimitBytes?: number;
  /** Receives stdout and stderr, interleaved as written. If it throws, the process is killed and runProcess rejects. */
  onOutput: (chunk: Buffer) => void;
  /**
   * Told the pid, which is also the process group id, and who the process is
   * (process-identity.ts), once it has run a while or before its first output: a process that
   * ends at once may never be told. If it throws, as onOutput.
   */
  onSpawn?: (pid: number, identity: string | undefined) => void;
}

export type ProcessEnd =
  | { kind: 'exited'; exitCode: number; aborted: boolean }
  | { kind: 'signaled'; signal: NodeJS.Signals; aborted: boolean }
  | { kind: 'not_started'; message: string }
  /** The spawner process died while the process ran: its group was killed. `message` says why. */
  | { kind: 'lost'; message: string };

/**
 * Runs one process in its own process group and settles once it has exited and its output is closed.
 *
 * - When the process exits by itself, what it left running in its group is killed: nothing of a step
 *   outlives it, and leftovers would otherwise keep the output pipe (and the step) open.
 * - On abort the group gets SIGTERM, then SIGKILL after `graceMs` unless the output has closed by then
 *   (so children still cleaning up after the main process died get the same grace).
 * - argv is never parsed by a shell; stderr is merged into stdout.
 *
 * The process is spawned, and owned until it ends, by the spawner process (spawner-child.c), which
 * keeps the cost of forking off this process's thread.
 */
export function runProcess(options: ProcessOptions): Promise<ProcessEnd> {
  return spawner.run(options);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
