import { afterAll, describe, expect } from 'vitest';
import { CLI_BIN, cleanUpHomes, connectionEnv, runCli } from './helpers/cli.js';
import { it, projectWith, type RunningServer } from './helpers/server.js';

afterAll(cleanUpHomes);

// Quoted for the shell of the steps: a checkout's path may have spaces.
const CLI = `/usr/bin/node '${CLI_BIN}'`;

/** A project with one command `go` running one pipeline of one task made of `code`. */
async function projectRunning(server: RunningServer, code: string, entry: Record<string, unknown> = {}) {
  const { project, client } = await projectWith(server, [
    { type: 'task', version: 1, name: 'work', data: { steps: [{ label: 'Work', code }] } },
    { type: 'pipeline', version: 1, name: 'flow', data: { tasks: [{ task: 'work', ...entry }] } },
    { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['flow'] } },
    {
      type: 'trigger',
      version: 1,
      name: 'on-go',
      data: { connector: 'custom', event: 'go', pipelines: ['flow'] },
    },
  ]);
  const env = connectionEnv(server, project.id);
  const cli = (...args: string[]) => runCli(args, { env });
  return { project, client, env, cli };
}

const idIn = (stdout: string) => JSON.parse(stdout).pipeline_ids[0] as string;

describe('pipewright pipelines and tasks', () => {
  it('shows every attempt of a retried task, restarts the pipeline, and edits its scratchpad', async ({
    server,
  }) => {
    // Fails on its first attempt and succeeds on its retry, the scratchpad telling them apart.
    const { cli, client } = await projectRunning(
      server,
      `if ${CLI} scratchpad get tried >/dev/null 2>&1; then echo "second try"; else ${CLI} scratchpad set tried yes; echo "first try"; exit 4; fi`,
      { nb_retries: 1 },
    );
    const pipelineId = idIn((await cli('commands', 'execute', 'go', '--json')).stdout);

    const watched = await cli('pipelines', 'watch', pipelineId);
    expect(watched.code).toBe(0);
    expect(watched.stdout).toContain('flow/work: successful (retry 1)');
    const { data: tasks } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId } } });
    const taskId = tasks?.elements[0]?.id ?? '';
    const output = await cli('tasks', 'output', taskId);
    expect(output.stdout).toBe(
      [
        '--- first attempt, step 1 "Work": failed, exit status 4 ---',
        'first try',
        '--- retry 1, step 1 "Work": successful, exit status 0 ---',
        'second try',
        '',
      ].join('\n'),
    );
    const shown = await cli('tasks', 'show', taskId);
    expect(shown.stdout).toMatch(/^Status: +successful$/m);
    expect(shown.stdout).toMatch(/^ATTEMPT +STEP +LABEL +STATUS +EXIT +DURATION$/m);

    // A restart clears the scratchpad: the task fails once and succeeds on its retry again.
    expect((await cli('pipelines', 'restart', pipelineId, '--wait')).code).toBe(0);
    expect((await cli('scratchpad', 'list', '--pipeline', pipelineId)).stdout).toBe(
      'KEY    VALUE\ntried  yes\n',
    );
    expect((await cli('scratchpad', 'set', 'other', 'value', '--pipeline', pipelineId)).code).toBe(0);
    expect((await cli('scratchpad', 'get', 'other', '--pipeline', pipelineId)).stdout).toBe('value');
    expect((await cli('scratchpad', 'delete', 'tried', '--pipeline', pipelineId)).code).toBe(0);
    expect((await cli('scratchpad', 'list', '--pipeline', pipelineId, '--json')).stdout).toBe(
      '{\n  "other": "value"\n}\n',
    );
    expect((await cli('scratchpad', 'clear', '--pipeline', pipelineId)).code).toBe(0);
    expect((await cli('scratchpad', 'list', '--pipeline', pipelineId, '--json')).stdout).toBe('{}\n');
    const missing = await cli('scratchpad', 'get', 'tried', '--pipeline', pipelineId);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/\(unknown_scratchpad_entry\)\n$/);
  });

  it('follows a failing pipeline to exit 1, then restarts it from the failure', async ({ server }) => {
    const { cli } = await projectRunning(server, `${CLI} scratchpad get ready`);
    const pipelineId = idIn((await cli('commands', 'execute', 'go', '--json')).stdout);

    const failed = await cli('pipelines', 'watch', pipelineId);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('flow/work failed: step 1 "Work" exited with status 1');
    expect(failed.stdout).toContain('(unknown_scratchpad_entry)');

    await cli('scratchpad', 'set', 'ready', 'yes', '--pipeline', pipelineId);
    const restarted = await cli('pipelines', 'restart-from-failure', pipelineId, '--wait');
    expect(restarted.code).toBe(0);
    expect(restarted.stdout).toMatch(new RegExp(`^flow ${pipelineId}: successful$`, 'm'));

    const listed = await cli('pipelines', 'list');
    expect(listed.stdout).toMatch(new RegExp(`^${pipelineId} +flow +successful `, 'm'));
    const shown = await cli('pipelines', 'show', pipelineId);
    expect(shown.stdout).toMatch(/^Status: +successful$/m);
    expect(shown.stdout).toMatch(/^\w{27} +work +successful +0 /m);
  });

  it('aborts a running pipeline', async ({ server }) => {
    const { cli } = await projectRunning(server, 'echo started; sleep 30');
    const pipelineId = idIn((await cli('commands', 'execute', 'go', '--json')).stdout);

    const aborted = await cli('pipelines', 'abort', pipelineId);
    const watched = await cli('pipelines', 'watch', pipelineId);
    const again = await cli('pipelines', 'abort', pipelineId);

    expect(aborted.stdout).toBe(`Aborted pipeline ${pipelineId}.\n`);
    expect(watched.code).toBe(1);
    expect(watched.stdout).toMatch(new RegExp(`^flow ${pipelineId}: aborted$`, 'm'));
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/\(pipeline_finished\)\n$/);
  });
});

describe('pipewright events', () => {
  it('sends an event from standard input, shows it and replays it', async ({ server }) => {
    const { env, cli } = await projectRunning(server, 'true');

    const sent = await runCli(['events', 'send', 'go', '-', '--json'], { env, input: '{"branch": "main"}' });
    const [event] = JSON.parse(sent.stdout) as { id: string }[];
    const shown = await cli('events', 'show', event?.id ?? '');
    const replayed = await cli('events', 'replay', event?.id ?? '', '--json');
    const ignored = await cli('events', 'send', 'nobody-listens', '{}');

    expect(sent.code).toBe(0);
    expect(shown.stdout).toMatch(/^Connector: +custom$/m);
    expect(shown.stdout).toContain('Data:\n{\n  "branch": "main"\n}\n');
    expect(JSON.parse(replayed.stdout)).toMatchObject({
      original_event_id: event?.id,
      data: { branch: 'main' },
    });
    expect(ignored.code).toBe(0);
    expect(ignored.stderr).toBe('No trigger accepted the event.\n');
  });
});
