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
});
