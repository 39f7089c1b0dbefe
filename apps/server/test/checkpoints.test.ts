import { statSync } from 'node:fs';
import { join } from 'node:path';
import { clientOf, lastLine, tempDirs } from '@pipewright/testing';
import { describe, expect, it } from 'vitest';
import { eventually, programStarter } from './program.js';

// The program's connections leave checkpoints of the write-ahead log to a thread of their own
// (checkpointing.ts): what a request writes reaches the database file within moments, where a
// connection checkpointing by itself would copy it only once the log passes 1,000 pages.

const tempDir = tempDirs();
const start = programStarter();

describe('checkpoints', () => {
  it("copies the write-ahead log into the database file on a thread of the program's own", async () => {
    const dataDir = tempDir('pipewright-checkpoints-');
    const server = await start(dataDir);
    const admin = clientOf(server, dataDir, lastLine(server.stdout()));
    const databaseFile = join(dataDir, 'pipewright.db');
    const { data: project } = await admin.POST('/projects', { body: { name: 'checkpoints' } });
    const before = statSync(databaseFile).size;

    // About 200 pages of log: far below what a connection would checkpoint by itself.
    const specs = Array.from({ length: 300 }, (_, i) => ({
      type: 'task',
      version: 1,
      name: `t${i}`,
      data: { steps: [{ command: `echo ${'x'.repeat(1000)}` }] },
    }));
    const { response } = await admin.PUT('/projects/id/{id}/resources', {
      params: { path: { id: project?.id ?? '' } },
      body: { specs: specs as never },
    });
    expect(response.status).toBe(204);

    // The 300 KB of specs are in the database file itself, not only in the log.
    const after = await eventually(() => {
      const size = statSync(databaseFile).size;
      return size > before + 300 * 1000 ? size : undefined;
    });
    expect(after).toBeGreaterThan(before + 300 * 1000);
    expect(await server.stop('SIGTERM')).toBe(0);
  });

  it('keeps the write-ahead log short through a stream of writes: writers wait for the thread', async () => {
    const dataDir = tempDir('pipewright-checkpoints-');
    const server = await start(dataDir);
    const admin = clientOf(server, dataDir, lastLine(server.stdout()));
    const logFile = join(dataDir, 'pipewright.db-wal');
    // Installs of 10,000 specs write for seconds on end. Without the wait, no write began once
    // the thread had copied the whole log, so the log was never started over: it grew to the
    // connections' own checkpoint at 10,000 pages (db.ts), on the API's thread, in each install.
    const body = JSON.stringify({
      specs: Array.from({ length: 10_000 }, (_, i) => ({
        type: 'task',
        version: 1,
        name: `t${i}`,
        data: { steps: [{ command: 'true' }] },
      })),
    });
    for (const name of ['first', 'second', 'third']) {
      const { data: project } = await admin.POST('/projects', { body: { name } });
      const { response } = await admin.PUT('/projects/id/{id}/resources', {
        params: { path: { id: project?.id ?? '' } },
        body: { specs: [] },
        bodySerializer: () => body,
      });
      expect(response.status).toBe(204);
    }

    // A log started over keeps its file's length: the file is as long as the log ever was.
    // Writers wait past 1,000 pages (store/index.ts) and the thread looks every 50 ms: the log
    // passes that by what the server writes meanwhile (3,400-3,700 pages at most in runs here),
    // and never reaches 10,000 (10,300 and more without the wait).
    const frameBytes = 4096 + 24;
    expect(statSync(logFile).size / frameBytes).toBeLessThan(8_000);
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
