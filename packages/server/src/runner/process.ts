import { type ChildProcess, spawn } from 'node:child_process';

export interface ProcessOptions {
  /** argv[0] is the path of an executable already found (see findExecutable). */
  argv: string[];
  /** The process's whole environment. */
  environment: Record<string, string>;
  cwd: string;
  signal: AbortSignal;
  graceMs: number;
  /** Receives stdout and stderr, interleaved as written. If it throws, the process is killed and runProcess rejects. */
  onOutput: (chunk: Buffer) => void;
  /** Told the pid, which is also the process group id, once the process is spawned. */
  onSpawn?: (pid: number) => void;
}

export type ProcessEnd =
  | { kind: 'exited'; exitCode: number; aborted: boolean }
  | { kind: 'signaled'; signal: NodeJS.Signals; aborted: boolean }
  | { kind: 'not_started'; message: string };

/**
 * After SIGKILL to its group, only a process that left the group (setsid) can still hold the output
 * pipe open; it must not hold the step forever.
 */
const ORPHANED_PIPE_WAIT_MS = 2_000;

/**
 * Runs one process in its own process group and settles once it has exited and its output is closed.
 *
 * - When the process exits by itself, what it left running in its group is killed: nothing of a step
 *   outlives it, and leftovers would otherwise keep the output pipe (and the step) open.
 * - On abort the group gets SIGTERM, then SIGKILL after `graceMs` unless the output has closed by then
 *   (so children still cleaning up after the main process died get the same grace).
 */
export function runProcess(options: ProcessOptions): Promise<ProcessEnd> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      // The wrapper points stderr at the stdout pipe, so both arrive in one stream in the order written,
      // then execs argv as positional parameters: nothing in argv is ever parsed by the shell.
      child = spawn('/bin/sh', ['-c', wrapperScript(options.environment), 'sh', ...options.argv], {
        cwd: options.cwd,
        env: options.environment,
        detached: true, // a new session, hence a process group of its own that can be stopped whole
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    } catch (error) {
      // e.g. a variable holding a NUL byte
      resolve({ kind: 'not_started', message: errorMessage(error) });
      return;
    }

    const { pid } = child;
    if (pid !== undefined) options.onSpawn?.(pid);
    let settled = false;
    let aborted = false;
    let outputFailure: { error: unknown } | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    let orphanedPipeTimer: NodeJS.Timeout | undefined;

    const killGroup = (signal: NodeJS.Signals) => {
      if (pid === undefined) return;
      try {
        process.kill(-pid, signal);
      } catch {
        // The group is already gone.
      }
    };
    const killNow = () => {
      killGroup('SIGKILL');
      orphanedPipeTimer ??= setTimeout(() => child.stdout?.destroy(), ORPHANED_PIPE_WAIT_MS);
    };
    const onAbort = () => {
      aborted = true;
      killGroup('SIGTERM');
      graceTimer = setTimeout(killNow, options.graceMs);
    };
    const settle = (end: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(graceTimer);
      clearTimeout(orphanedPipeTimer);
      options.signal.removeEventListener('abort', onAbort);
      killGroup('SIGKILL');
      end();
    };

    options.signal.addEventListener('abort', onAbort, { once: true });
    child.stdout?.on('data', (chunk: Buffer) => {
      if (outputFailure !== undefined) return;
      try {
        options.onOutput(chunk);
      } catch (error) {
        outputFailure = { error };
        killNow();
      }
    });
    // Emitted only when the process could not be spawned (no kill or IPC goes through `child`).
    child.on('error', (error) => settle(() => resolve({ kind: 'not_started', message: error.message })));
    child.on('exit', () => {
      options.signal.removeEventListener('abort', onAbort);
      if (!aborted) killNow();
    });
    child.on('close', (exitCode, signal) =>
      settle(() => {
        if (outputFailure !== undefined) reject(outputFailure.error);
        else if (signal !== null) resolve({ kind: 'signaled', signal, aborted });
        else resolve({ kind: 'exited', exitCode: exitCode ?? -1, aborted });
      }),
    );
  });
}

/**
 * /bin/sh exports PWD by itself; it is unset again unless the environment given has it, so that the
 * command sees exactly that environment. `exec 2>&1` comes first so that the shell's own error, should
 * the exec fail after all, lands in the output too.
 */
function wrapperScript(environment: Record<string, string>): string {
  return `exec 2>&1; ${Object.hasOwn(environment, 'PWD') ? '' : 'unset PWD; '}exec "$@"`;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
