import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/logger.js';
import { createWorkLoop } from '../../../src/scheduler/work-loop.js';

const POLL_MS = 1_000;

/** A loop whose passes and reads of the due time are counted; `due` is what the read answers. */
function countedLoop() {
  const counts = { passes: 0, reads: 0 };
  const state: { due: string | undefined } = { due: undefined };
  const loop = createWorkLoop({
    pass: async () => {
      counts.passes += 1;
    },
    nextDueTime: async () => {
      counts.reads += 1;
      return state.due;
    },
    clock: () => new Date(),
    pollIntervalMs: POLL_MS,
    logger: silentLogger,
  });
  return { loop, counts, state };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the work loop', () => {
  it('reads when work is due after its first pass, and not after the passes that wake-ups bring', async () => {
    const { loop, counts } = countedLoop();
    loop.start();
    await vi.advanceTimersByTimeAsync(1);
    expect(counts).toEqual({ passes: 1, reads: 1 });
    for (let i = 0; i < 5; i += 1) {
      loop.wakeUp();
      await vi.advanceTimersByTimeAsync(1);
    }
    expect(counts).toEqual({ passes: 6, reads: 1 });
    loop.stop();
  });

  it('reads again once told the due time changed, and at each poll', async () => {
    const { loop, counts } = countedLoop();
    loop.start();
    await vi.advanceTimersByTimeAsync(1);
    loop.dueTimeChanged();
    await vi.advanceTimersByTimeAsync(1);
    expect(counts).toEqual({ passes: 2, reads: 2 });
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(counts).toEqual({ passes: 3, reads: 3 });
    loop.stop();
  });

  it('passes when the work read is due, then reads what is due next', async () => {
    const { loop, counts, state } = countedLoop();
    state.due = new Date(Date.now() + 300).toISOString();
    loop.start();
    await vi.advanceTimersByTimeAsync(1);
    expect(counts).toEqual({ passes: 1, reads: 1 });
    state.due = new Date(Date.now() + 600).toISOString();
    await vi.advanceTimersByTimeAsync(300);
    expect(counts).toEqual({ passes: 2, reads: 2 });
    await vi.advanceTimersByTimeAsync(301);
    expect(counts).toEqual({ passes: 3, reads: 3 });
    loop.stop();
  });
});
