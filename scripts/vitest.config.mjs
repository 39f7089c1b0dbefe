import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.mjs'],
    // Bounds for a broken run only, wide enough for a loaded machine a few times slower than
    // usual: these tests run npm, node and dpkg as processes, seconds each when the CPU is busy.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
