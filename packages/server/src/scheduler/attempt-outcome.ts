import type { RunOutcome } from '../runner/index.js';
import type { AttemptEnd } from './task-completion.js';

export const INTERRUPTED_BY_STOP = 'interrupted by a server stop';

/** The outcome of a run that could not start at all: it failed, saying why. */
export function couldNotRun(error: unknown): RunOutcome {
  const reason = error instanceof Error ? error.message : String(error);
  return { outcome: 'failed', stepIndex: -1, message: `the task could not run: ${reason}` };
}

/**
 * How an attempt ends, given how its run ended. An aborted run was stopped by a pipeline abort
 * (already recorded: this changes nothing) or by a server stop, which ends the attempt as a
 * restart would. A run that timed out failed, and is retried as any failure is.
 */
export function attemptEnd(run: RunOutcome): AttemptEnd {
  if (run.outcome === 'succeeded') return { outcome: 'succeeded' };
  return { outcome: 'failed', message: run.outcome === 'aborted' ? INTERRUPTED_BY_STOP : run.message };
}
