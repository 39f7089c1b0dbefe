import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // A store call that would wait for the transaction it is made from throws (store/connection-gate.ts).
    env: { PIPEWRIGHT_STORE_CHECKS: '1' },
    // Bounds for a broken run only, wide enough for a loaded machine a few times slower than
    // usual: tests wait for conditions, each with its own generous bound, never for durations.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    projects: [
      // Every test, on the embedded default, SQLite.
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'] } },
      // The API's tests again, each server on a database of its own in a throwaway PostgreSQL
      // cluster (test/postgres): the API and the engine behind it, on the other database.
      {
        extends: true,
        test: {
          name: 'postgres',
          include: ['test/api/**/*.test.ts'],
          env: { PIPEWRIGHT_TEST_DATABASE: 'postgres' },
          globalSetup: ['test/postgres/global-setup.ts'],
        },
      },
    ],
  },
});
