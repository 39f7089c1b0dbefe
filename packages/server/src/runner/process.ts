import type { TaskUser } from './task-users.js';

/** One process to run (see Spawner.run), and what the caller is told while it runs. */
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
  /** Receives stdout and stderr, interleaved as written. If it throws, the process is killed and Spawner.run rejects. */
  onOutput: (chunk: Buffer) => void;
  /**
   * Told the pid, which is also the process group id, and who the process is
   * (process-identity.ts), once it has run a while or before its first output: a process that
   * ends at once may never be told. If it throws, as onOutput.
   */
  onSpawn?: (pid: number, identity: string | undefined) => void;
}

/** How a process ended. */
export type ProcessEnd =
  | { kind: 'exited'; exitCode: number; aborted: boolean }
  | { kind: 'signaled'; signal: NodeJS.Signals; aborted: boolean }
  | { kind: 'not_started'; message: string }
  /** The spawner process died while the process ran: its group was killed. `message` says why. */
  | { kind: 'lost'; message: string };

/** What an error says, whatever was thrown. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
