import { describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../../src/runner/index.js';
import { attemptEnd, couldNotRun, INTERRUPTED_BY_STOP } from '../../../src/scheduler/attempt-outcome.js';
import type { AttemptEnd } from '../../../src/scheduler/task-completion.js';

describe('attemptEnd', () => {
  it.each<{ name: string; run: RunOutcome; end: AttemptEnd }>([
    { name: 'a run that succeeded succeeds', run: { outcome: 'succeeded' }, end: { outcome: 'succeeded' } },
    {
      name: 'a failed run fails with its message',
      run: { outcome: 'failed', stepIndex: 1, message: 'step 2 exited with status 3' },
      end: { outcome: 'failed', message: 'step 2 exited with status 3' },
    },
    {
      name: 'a run that timed out fails with its message, to be retried as any failure',
      run: {
        outcome: 'timed_out',
        stepIndex: 0,
        message: "step 1 timed out: the task's timeout of 1 s passed",
      },
      end: { outcome: 'failed', message: "step 1 timed out: the task's timeout of 1 s passed" },
    },
    {
      name: 'an aborted run fails as interrupted by a stop',
      run: { outcome: 'aborted' },
      end: { outcome: 'failed', message: INTERRUPTED_BY_STOP },
    },
  ])('$name', ({ run, end }) => {
    expect(attemptEnd(run)).toEqual(end);
  });
});

describe('couldNotRun', () => {
  it('fails before any step, saying why', () => {
    expect(couldNotRun(new Error('no task user is ready'))).toEqual({
      outcome: 'failed',
      stepIndex: -1,
      message: 'the task could not run: no task user is ready',
    });
    expect(couldNotRun('odd')).toMatchObject({ message: 'the task could not run: odd' });
  });
});
