import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Bounds for a broken run only, wide enough for a loaded machine a few times slower than
    // usual: tests wait for conditions, each with its own generous bound, never for durations.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
