import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '@pipewright/testing';
import { afterAll, describe, expect } from 'vitest';
import { cleanUpHomes, connectionEnv, runCli } from './helpers/cli.js';
import { it, projectWith } from './helpers/server.js';

// A task its pipeline's restarts run again keeps the output of every run: `tasks output` heads
// each run with its number, and following a restart reports the failures of the new run only.

afterAll(cleanUpHomes);
const tempDir = tempDirs();

// Counts its tries in DIR/tries and fails until DIR/fixed exists. The server runs tasks as its
// own user (--task-users off, as startServer() of @pipewright/testing starts it), which may
// write here.
const FLAKY = `echo try >> "$DIR/tries"; echo "try $(wc -l < "$DIR/tries" | tr -d ' ')"; [ -e "$DIR/fixed" ]`;

describe('pipewright tasks output', () => {
  it('shows every run of a task restarted from its failure, headed by its number', async ({ server }) => {
    const dir = tempDir('pipewright-cli-runs-');
    const { project, client } = await projectWith(server, [
      {
        type: 'task',
        version: 1,
        name: 'work',
        data: { environment: { DIR: dir }, steps: [{ label: 'Work', code: FLAKY }] },
      },
      { type: 'pipeline', version: 1, name: 'flow', data: { tasks: [{ task: 'work' }] } },
      { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['flow'] } },
    ]);
    const env = connectionEnv(server, project.id);
    const cli = (...args: string[]) => runCli(args, { env });
    const executed = await cli('commands', 'execute', 'go', '--json');
    const pipelineId = JSON.parse(executed.stdout).pipeline_ids[0] as string;

    expect((await cli('pipelines', 'watch', pipelineId)).code).toBe(1);
    // Run 2 fails too: what is reported is its failure, not run 1's again.
    const second = await cli('pipelines', 'restart-from-failure', pipelineId, '--wait');
    expect(second.code).toBe(1);
    expect(second.stdout).toContain('flow/work: failed (run 2)');
    expect(second.stdout).toContain('try 2\n');
    expect(second.stdout).not.toContain('try 1\n');
    writeFileSync(join(dir, 'fixed'), '');
    const third = await cli('pipelines', 'restart-from-failure', pipelineId, '--wait');
    expect(third.code).toBe(0);
    expect(third.stdout).toContain('flow/work: successful (run 3)');

    const { data: tasks } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId } } });
    const taskId = tasks?.elements[0]?.id ?? '';
    const output = await cli('tasks', 'output', taskId);
    expect(output.code).toBe(0);
    expect(output.stdout).toBe(
      [
        '=== run 1 ===',
        '--- first attempt, step 1 "Work": failed, exit status 1 ---',
        'try 1',
        '=== run 2 ===',
        '--- first attempt, step 1 "Work": failed, exit status 1 ---',
        'try 2',
        '=== run 3 ===',
        '--- first attempt, step 1 "Work": successful, exit status 0 ---',
        'try 3',
        '',
      ].join('\n'),
    );
    const json = await cli('tasks', 'output', taskId, '--json');
    expect((JSON.parse(json.stdout) as { run: number }[]).map((step) => step.run)).toEqual([1, 2, 3]);

    const shown = await cli('tasks', 'show', taskId);
    expect(shown.stdout).toMatch(/^Run: +3$/m);
    expect(shown.stdout).toMatch(/^RUN +ATTEMPT +STEP +LABEL +STATUS +EXIT +DURATION$/m);
    expect(shown.stdout).toMatch(/^1 +0 +1 +Work +failed +1 /m);
    expect(shown.stdout).toMatch(/^3 +0 +1 +Work +successful +0 /m);
  });
});
