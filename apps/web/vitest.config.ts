import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // A store call that would wait for the transaction it is made from throws (store/connection-gate.ts).
    env: { PIPEWRIGHT_STORE_CHECKS: '1' },
    include: ['test/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
