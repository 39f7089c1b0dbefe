import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createStepRecorder } from '../../../src/scheduler/step-recorder.js';
import type { Store } from '../../../src/store/index.js';

// When a step's output is stored decides how soon a viewer following the task sees it: a line
// printed after a quiet spell goes at once, a burst is batched.

/** A store that keeps the output appended, in order, and nothing else. */
function outputStore() {
  const appended: string[] = [];
  const tables = {
    stepExecutions: {
      start: async () => {},
      appendOutput: async (_key: unknown, text: string) => {
        appended.push(text);
      },
      end: async () => {},
      insertEnded: async () => {},
    },
  };
  const store = {
    ...tables,
    transaction: <T>(fn: (tx: typeof tables) => Promise<T>) => fn(tables),
  } as unknown as Store;
  return { store, appended };
}

describe('the step recorder', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => vi.useRealTimers());

  it('stores a line printed alone within milliseconds, and at most one batch per gap', async () => {
    const { store, appended } = outputStore();
    const recorder = createStepRecorder(
      store,
      { taskId: 't', attempt: 0, start: '' },
      [undefined],
      (error) => {
        throw error;
      },
    );
    recorder.stepStarted(0, new Date());
    recorder.processStarted?.(0, 100, undefined);

    recorder.stepOutput(0, 'first\n');
    await vi.advanceTimersByTimeAsync(1);
    expect(appended).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(appended).toEqual(['first\n']);

    // Right after a batch: the next waits for the end of the gap (20 ms), together.
    recorder.stepOutput(0, 'second\n');
    await vi.advanceTimersByTimeAsync(10);
    recorder.stepOutput(0, 'third\n');
    await vi.advanceTimersByTimeAsync(8);
    expect(appended).toEqual(['first\n']);
    await vi.advanceTimersByTimeAsync(2);
    expect(appended).toEqual(['first\n', 'second\nthird\n']);

    // Past the gap: within 2 ms again.
    await vi.advanceTimersByTimeAsync(50);
    recorder.stepOutput(0, 'fourth\n');
    await vi.advanceTimersByTimeAsync(2);
    expect(appended).toEqual(['first\n', 'second\nthird\n', 'fourth\n']);
  });
});
