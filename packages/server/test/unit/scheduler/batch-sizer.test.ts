import { describe, expect, it } from 'vitest';
import { batchSizer } from '../../../src/scheduler/batch-sizer.js';

/** The sizes a sizer settles on for batches that cost `fixedMs` plus `rowMs` per row. */
function settle(fixedMs: number, rowMs: number, budgetMs = 2, batches = 40): number[] {
  const sizer = batchSizer(budgetMs);
  const sizes: number[] = [];
  for (let n = 0; n < batches; n += 1) {
    sizes.push(sizer.size);
    sizer.took(fixedMs + rowMs * sizer.size);
  }
  return sizes.slice(-5);
}

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
