import { fileURLToPath } from 'node:url';
import { getScratchpadEntry } from '@pipewright/client';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanUpHomes, connectionEnv, runCli } from './helpers/cli.js';
import { projectWith, startServer } from './helpers/server.js';

afterAll(cleanUpHomes);

const asRoot = process.getuid?.() === 0;
const CHECKOUT = fileURLToPath(new URL('../../..', import.meta.url));

// A step calls `pipewright` by its name, as the README says it can: the server puts its own CLI
// first on the task's PATH, where the task's user can run it, wherever this checkout lies.
describe.each([
  { taskUsers: true, runsAs: asRoot ? 'a user of its own' : "the server's user (not root here)" },
  { taskUsers: false, runsAs: "the server's user (--task-users off)" },
])('pipewright in a step, the task running as $runsAs', ({ taskUsers }) => {
  it('writes and reads the scratchpad of its pipeline with the server’s own CLI', async () => {
    const server = await startServer({ taskUsers });
    try {
      const { project, client } = await projectWith(server, [
        {
          type: 'task',
          version: 1,
          name: 'note',
          data: {
            steps: [
              {
                code: [
                  'pipewright scratchpad set k v',
                  'echo "read back: $(pipewright scratchpad get k)"',
                  'echo "uid: $(id -u)"',
                  'echo "program: $(command -v pipewright)"',
                ].join('\n'),
              },
            ],
          },
        },
        { type: 'pipeline', version: 1, name: 'note', data: { tasks: [{ task: 'note' }] } },
        { type: 'command', version: 1, name: 'note', data: { parameters: [], pipelines: ['note'] } },
      ]);

      const result = await runCli(['commands', 'execute', 'note', '--wait', '--json'], {
        env: connectionEnv(server, project.id),
      });

      expect(result.code, result.stdout + result.stderr).toBe(0);
      const pipelineId = JSON.parse(result.stdout).pipelines[0].id as string;
      expect(await getScratchpadEntry(client, pipelineId, 'k')).toBe('v');
      const { data: tasks } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId } } });
      const { data: steps } = await client.GET('/tasks/id/{id}/steps', {
        params: { path: { id: tasks?.elements[0]?.id ?? '' } },
      });
      const lines = (steps?.[0]?.output ?? '').trim().split('\n');
      expect(lines[0]).toBe('read back: v');
      const uid = Number(lines[1]?.replace('uid: ', ''));
      if (taskUsers && asRoot) expect(uid).toBeGreaterThanOrEqual(2_000_000_000);
      else expect(uid).toBe(process.getuid?.());
      // The server's copy, in its work root, not this checkout's.
      expect(lines[2]).toMatch(/^program: \/.*\/bin\/pipewright$/);
      expect(lines[2]).not.toContain(CHECKOUT);
    } finally {
      await server.stop();
    }
  });
});
