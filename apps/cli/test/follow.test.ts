import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '@pipewright/testing';
import { afterAll, describe, expect } from 'vitest';
import { cleanUpHomes, connectionEnv, runCli } from './helpers/cli.js';
import { startCli } from './helpers/live.js';
import { startProxy } from './helpers/proxy.js';
import { it, projectWith } from './helpers/server.js';

// The commands that follow pipelines and output read the server's live streams: what they show
// comes as it happens, and a cut connection resumes where it was.

afterAll(cleanUpHomes);
const tempDir = tempDirs();

/** A directory of the test's own, which the steps (run as the server's user) read. */
const directory = () => tempDir('pipewright-cli-follow-');

// Prints a line, then waits for the file $DIR/go (the test creates it once it saw the line),
// bounded: without the file the step fails after two minutes.
const AWAIT_GO =
  'echo "waiting for go"; i=0; ' +
  'while [ ! -e "$DIR/go" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done; [ -e "$DIR/go" ]';

const task = (name: string, dir: string, steps: { label: string; code: string }[]) => ({
  type: 'task',
  version: 1,
  name,
  data: { environment: { DIR: dir }, steps },
});
const pipeline = (name: string, tasks: string[]) => ({
  type: 'pipeline',
  version: 1,
  name,
  data: { tasks: tasks.map((name) => ({ task: name })) },
});
const command = (name: string, pipelines: string[]) => ({
  type: 'command',
  version: 1,
  name,
  data: { parameters: [], pipelines },
});

describe('pipewright tasks output --follow', () => {
  it('prints a line a step writes before the step ends, and ends with the task', async ({ server }) => {
    const dir = directory();
    const { project, client } = await projectWith(server, [
      task('work', dir, [
        { label: 'Wait', code: `${AWAIT_GO}; echo went` },
        { label: 'After', code: 'echo after' },
      ]),
      pipeline('flow', ['work']),
      command('go', ['flow']),
    ]);
    const env = connectionEnv(server, project.id);
    const executed = await runCli(['commands', 'execute', 'go', '--json'], { env });
    const pipelineId = JSON.parse(executed.stdout).pipeline_ids[0] as string;
    const { data: tasks } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId } } });
    const taskId = tasks?.elements[0]?.id ?? '';

    const follow = startCli(['tasks', 'output', taskId, '--follow'], { env });
    await follow.printed('waiting for go\n');
    // The step is waiting for the file: what came is its first line, while it runs.
    expect(follow.running()).toBe(true);
    expect(follow.stdout()).toBe('--- first attempt, step 1 "Wait": running ---\nwaiting for go\n');
    writeFileSync(join(dir, 'go'), '');
    const result = await follow.ended;

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // The second step may have ended by the time its output comes: its heading says which.
    expect(result.stdout).toMatch(
      new RegExp(
        '^--- first attempt, step 1 "Wait": running ---\\nwaiting for go\\nwent\\n' +
          '--- first attempt, step 2 "After": (running|successful, exit status 0) ---\\nafter\\n$',
      ),
    );
    const { data: ended } = await client.GET('/tasks/id/{id}', { params: { path: { id: taskId } } });
    expect(ended?.status).toBe('successful');
  });

  it('prints the output of a task that has ended as `tasks output` does, and refuses --json', async ({
    server,
  }) => {
    const dir = directory();
    const { project, client } = await projectWith(server, [
      task('work', dir, [
        { label: 'One', code: 'printf "no newline"' },
        { label: 'Two', code: 'true' },
        { label: 'Three', code: 'echo "three"; exit 5' },
      ]),
      pipeline('flow', ['work']),
      command('go', ['flow']),
    ]);
    const env = connectionEnv(server, project.id);
    const executed = await runCli(['commands', 'execute', 'go', '--wait', '--json'], { env });
    const pipelineId = JSON.parse(executed.stdout).pipelines[0].id as string;
    const { data: tasks } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId } } });
    const taskId = tasks?.elements[0]?.id ?? '';

    const followed = await runCli(['tasks', 'output', taskId, '--follow'], { env });
    const printed = await runCli(['tasks', 'output', taskId], { env });
    const refused = await runCli(['tasks', 'output', taskId, '--follow', '--json'], { env });

    expect(followed.code).toBe(0);
    expect(printed.stdout).toContain('--- first attempt, step 2 "Two": successful, exit status 0 ---\n');
    expect(followed.stdout).toBe(printed.stdout);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('pipewright: --follow prints text: it cannot go with --json');
  });
});

describe('pipewright commands execute --wait', () => {
  it('reports a failure that comes while it follows several pipelines', async ({ server }) => {
    const dir = directory();
    const { project } = await projectWith(server, [
      task('fine', dir, [{ label: 'Fine', code: 'echo fine' }]),
      task('broken', dir, [{ label: 'Break', code: `${AWAIT_GO}; echo "broke" >&2; exit 3` }]),
      pipeline('calm', ['fine']),
      pipeline('rough', ['broken']),
      command('go', ['calm', 'rough']),
    ]);

    const execute = startCli(['commands', 'execute', 'go', '--wait'], {
      env: connectionEnv(server, project.id),
    });
    await execute.printed('rough/broken: started\n');
    writeFileSync(join(dir, 'go'), '');
    const result = await execute.ended;

    expect(result.code).toBe(1);
    expect(result.stdout).toContain('calm/fine: successful\n');
    expect(result.stdout).toMatch(/^calm \w{27}: successful$/m);
    expect(result.stdout).toContain('rough/broken: failed\n');
    expect(result.stdout).toMatch(/^rough \w{27}: failed$/m);
    expect(result.stdout).toContain(
      [
        'rough/broken failed: step 1 "Break" exited with status 3',
        '--- step 1 "Break": failed, exit status 3 ---',
        'waiting for go',
        'broke',
        '',
      ].join('\n'),
    );
  });
});

describe('pipewright pipelines watch', () => {
  it('resumes after its connection is cut, with what changed meanwhile', async ({ server }) => {
    const dir = directory();
    const { project } = await projectWith(server, [
      task('work', dir, [{ label: 'Wait', code: AWAIT_GO }]),
      pipeline('flow', ['work']),
      command('go', ['flow']),
    ]);
    const env = connectionEnv(server, project.id);
    const executed = await runCli(['commands', 'execute', 'go', '--json'], { env });
    const pipelineId = JSON.parse(executed.stdout).pipeline_ids[0] as string;
    const proxy = await startProxy(server.url);
    try {
      const watch = startCli(['pipelines', 'watch', pipelineId], {
        env: { ...env, PIPEWRIGHT_API_URL: proxy.url },
      });
      await watch.printed('flow/work: started\n');

      // Cut off, the watch tries again; the pipeline ends meanwhile, as another watch (not cut
      // off) shows. Let through again, the watch learns of the end only by resuming its stream
      // where it was: one started from now would never tell it.
      proxy.cut();
      await proxy.refused(1);
      writeFileSync(join(dir, 'go'), '');
      const other = await runCli(['pipelines', 'watch', pipelineId], { env });
      expect(other.code).toBe(0);
      expect(watch.running()).toBe(true);
      proxy.restore();
      const result = await watch.ended;

      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('flow/work: successful\n');
      expect(result.stdout.trimEnd().split('\n').at(-1)).toBe(`flow ${pipelineId}: successful`);
    } finally {
      await proxy.close();
    }
  });
});
