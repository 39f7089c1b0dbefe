import { describe, expect, it } from 'vitest';
import { batchSizer } from '../../../src/scheduler/batch-sizer.js';

/**
 * The last `last` sizes a sizer settles on for batches that cost `fixedMs` plus `rowMs` per
 * row, plus what `noise` adds to each.
 */
function settle(
  fixedMs: number,
  rowMs: number,
  {
    budgetMs = 2,
    batches = 40,
    last = 5,
    noise = (): number => 0,
    sizer = batchSizer(budgetMs),
  }: {
    budgetMs?: number;
    batches?: number;
    last?: number;
    noise?: () => number;
    sizer?: ReturnType<typeof batchSizer>;
  } = {},
): number[] {
  const sizes: number[] = [];
  for (let n = 0; n < batches; n += 1) {
    sizes.push(sizer.size);
    sizer.took(fixedMs + rowMs * sizer.size + noise());
  }
  return sizes.slice(-last);
}

/** Numbers in [0, 1), the same every run (a linear congruential generator). */
function pseudoRandom(seed = 1): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

describe('batchSizer', () => {
  it('sizes batches whose rows take the budget when a batch costs nothing of itself', () => {
    for (const size of settle(0, 0.01)) expect(size).toBeGreaterThanOrEqual(150);
    for (const size of settle(0, 0.01)) expect(size).toBeLessThanOrEqual(200);
  });

  it('gives the budget to the rows past what every batch costs, as a round trip to PostgreSQL', () => {
    // 3 ms per batch whatever its size: without counting it apart, every batch had one row.
    for (const size of settle(3, 0.01)) {
      expect(size).toBeGreaterThanOrEqual(100);
      expect(size).toBeLessThanOrEqual(210);
    }
  });

  it("sizes batches after their average cost when each batch's time varies by as much as the budget", () => {
    // 3 ms per batch, 0.05 per row, and up to 4 ms more at random (a busy machine): following
    // each measurement, batches shrank to one row and stayed there.
    const random = pseudoRandom();
    const sizes = settle(3, 0.05, { batches: 400, last: 200, noise: () => 4 * random() });
    expect(median(sizes)).toBeGreaterThanOrEqual(15);
    expect(median(sizes)).toBeLessThanOrEqual(60);
  });

  it('recovers from a batch of one row slowed by cold caches', () => {
    const sizer = batchSizer(2);
    while (sizer.size > 1) sizer.took(100);
    sizer.took(40);
    // The budget's 200 rows, give or take what is left of the cold batch in the fixed cost:
    // taken as the fixed cost, 40 ms made every later batch 2,000 rows.
    for (const size of settle(3, 0.01, { sizer, batches: 100 })) {
      expect(size).toBeGreaterThanOrEqual(100);
      expect(size).toBeLessThanOrEqual(400);
    }
  });

  it('grows at most twofold at a time, shrinks to one row and stays within 2,000', () => {
    const sizer = batchSizer(2);
    const sizes = [sizer.size];
    for (let n = 0; n < 15; n += 1) {
      sizer.took(0);
      sizes.push(sizer.size);
    }
    for (let n = 1; n < sizes.length; n += 1)
      expect(sizes[n] as number).toBeLessThanOrEqual(2 * (sizes[n - 1] as number));
    expect(sizes.at(-1)).toBe(2000);
    const slow = batchSizer(2);
    slow.took(1000);
    expect(slow.size).toBe(1);
  });
});
