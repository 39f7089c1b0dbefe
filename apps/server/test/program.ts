import { type RunningProgram, startProgram } from '@pipewright/testing';
import { afterEach } from 'vitest';

/**
 * Starts the real program on an ephemeral port of 127.0.0.1 and `dataDir`, with `args` after
 * those, and `watch` on its standard error (startProgram). After each test of the calling file,
 * the programs it started that still run are killed: a failing test leaves none behind. Call it
 * at the top of a test file.
 */
export function programStarter(): (
  dataDir: string,
  args?: string[],
  watch?: (stderr: string) => void,
) => Promise<RunningProgram> {
  const started: RunningProgram[] = [];
  afterEach(async () => {
    const running = started
      .splice(0)
      .filter((program) => program.process.exitCode === null && program.process.signalCode === null);
    await Promise.all(running.map((program) => program.stop('SIGKILL')));
  });
  return async (dataDir, args = [], watch) => {
    const program = await startProgram(
      ['--listen', '127.0.0.1:0', '--data-dir', dataDir, ...args],
      {},
      watch,
    );
    started.push(program);
    return program;
  };
}

/** Whether a process of this number exists (it may be a zombie, not yet reaped). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Polls `check` until it returns a value, for at most `timeoutMs`: a bound for a broken run only,
 * generous enough for a machine several times slower than usual, so tests rarely give their own.
 */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
