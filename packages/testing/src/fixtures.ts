import { test as base } from 'vitest';
import { startServer } from './server.js';

/**
 * vitest's `test` with a `server` fixture: the real program on a fresh data directory, shared by
 * the tests of a file, started for the first test that takes it and stopped after the file's last.
 */
export const test = base.extend(
  'server',
  { scope: 'file' },
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures this one needs from the pattern.
  async ({}, { onCleanup }) => {
    const server = await startServer();
    onCleanup(() => server.stop());
    return server;
  },
);
