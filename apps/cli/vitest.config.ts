import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // A store call that would wait for the transaction it is made from throws (store/connection-gate.ts).
    env: { PIPEWRIGHT_STORE_CHECKS: '1' },
    include: ['test/**/*.test.ts'],
    // Bounds for a broken run only, wide enough for a loaded machine a few times slower than
    // usual: tests wait for conditions, each with its own generous bound, never for durations.
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
