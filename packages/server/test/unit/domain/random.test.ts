import { describe, expect, it } from 'vitest';
import { randomView } from '../../../src/domain/random.js';

describe('randomView', () => {
  it('hands out fresh bytes on every call, across refills of its pool', () => {
    // 60 views of 100 bytes: past the 4 KiB pool, and one that does not fit what is left of it.
    const views = Array.from({ length: 60 }, () => Buffer.from(randomView(100)));
    for (const view of views) expect(view).toHaveLength(100);
    expect(new Set(views.map((view) => view.toString('hex'))).size).toBe(views.length);
    expect(randomView(4096)).toHaveLength(4096);
  });
});
