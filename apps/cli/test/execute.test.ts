import { afterAll, describe, expect } from 'vitest';
import { CLI_BIN, cleanUpHomes, connectionEnv, runCli } from './helpers/cli.js';
import { it, projectWith } from './helpers/server.js';

afterAll(cleanUpHomes);

const task = (name: string, code: string, extra: Record<string, unknown> = {}) => ({
  type: 'task',
  version: 1,
  name,
  data: { steps: [{ label: `Run ${name}`, code }], ...extra },
});
const pipeline = (name: string, tasks: Record<string, unknown>[]) => ({
  type: 'pipeline',
  version: 1,
  name,
  data: { tasks },
});
const command = (name: string, pipelines: string[], parameters: Record<string, unknown>[] = []) => ({
  type: 'command',
  version: 1,
  name,
  data: { parameters, pipelines },
});

const RELEASE = [
  task('build', 'echo "building $VERSION x$COUNT, dry run: $DRY"'),
  task(
    'check',
    'echo "checking"\nif [ "$DRY" = false ]; then echo "refusing a real release" >&2; exit 3; fi',
  ),
  pipeline('release', [{ task: 'build' }, { task: 'check', dependencies: ['build'] }]),
  command(
    'release',
    ['release'],
    [
      { name: 'version', type: 'string', environment: 'VERSION' },
      { name: 'count', type: 'number', default: 1, environment: 'COUNT' },
      { name: 'dry', type: 'boolean', default: true, environment: 'DRY' },
      { name: 'channel', type: 'string', values: ['stable', 'beta'], default: 'beta' },
    ],
  ),
];

describe('pipewright commands execute', () => {
  it('follows with --wait a successful execution and exits 0', async ({ server }) => {
    const { project, client } = await projectWith(server, RELEASE);

    const result = await runCli(['commands', 'execute', 'release', 'version=1.4.0', 'count=3', '--wait'], {
      env: connectionEnv(server, project.id),
    });

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^Executed release \(\w{27}\)\.$/);
    expect(lines).toContain('release/build: successful');
    expect(lines).toContain('release/check: successful');
    expect(lines.at(-1)).toMatch(/^release \w{27}: successful$/);
    const { data: executions } = await client.GET('/command_executions');
    expect(executions?.elements[0]?.parameters).toEqual({
      version: '1.4.0',
      count: 3,
      dry: true,
      channel: 'beta',
    });
  });

  it("exits 1 when a pipeline fails, and prints the failed steps' output", async ({ server }) => {
    const { project } = await projectWith(server, RELEASE);

    const result = await runCli(['commands', 'execute', 'release', 'version=2', 'dry=false', '--wait'], {
      env: connectionEnv(server, project.id),
    });

    expect(result.code).toBe(1);
    expect(result.stdout).toContain('release/check: failed');
    expect(result.stdout).toMatch(/^release \w{27}: failed$/m);
    expect(result.stdout).toContain(
      [
        'release/check failed: step 1 "Run check" exited with status 3',
        '--- step 1 "Run check": failed, exit status 3 ---',
        'checking',
        'refusing a real release',
        '',
      ].join('\n'),
    );
  });

  it.for<[string[], string]>([
    [['version=1', 'count=many'], 'parameter count is a number: "many" is not one'],
    [['version=1', 'dry=yes'], 'parameter dry is a boolean: true or false, not "yes"'],
    [['version=1', 'channel=nightly'], 'parameter channel must be one of stable, beta, not "nightly"'],
    [
      ['version=1', 'colour=red'],
      'command release has no parameter colour (its parameters: version, count, dry, channel)',
    ],
    [['count=2'], 'command release requires version=VALUE'],
    [['version'], '"version" is not KEY=VALUE'],
  ])('refuses %j before sending anything (exit 2)', async ([assignments, message], { server }) => {
    const { project, client } = await projectWith(server, RELEASE);

    const result = await runCli(['commands', 'execute', 'release', ...assignments], {
      env: connectionEnv(server, project.id),
    });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`pipewright: ${message}`);
    expect(result.stderr).toContain('Usage: pipewright commands execute NAME [KEY=VALUE...]');
    const { data: executions } = await client.GET('/command_executions');
    expect(executions?.elements).toEqual([]);
  });

  it('prints the execution as JSON without --wait', async ({ server }) => {
    const { project } = await projectWith(server, RELEASE);

    const result = await runCli(['commands', 'execute', 'release', 'version=3', '--json'], {
      env: connectionEnv(server, project.id),
    });

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      parameters: { version: '3', count: 1, dry: true, channel: 'beta' },
      pipeline_ids: [expect.any(String)],
    });
  });
});

describe('pipewright inside a task', () => {
  it('uses the scratchpad of the running pipeline with only the environment of the task', async ({
    server,
  }) => {
    // Quoted for the shell of the steps: a checkout's path may have spaces.
    const cli = `/usr/bin/node '${CLI_BIN}'`;
    const { project, client } = await projectWith(server, [
      task(
        'note',
        [
          `${cli} scratchpad set version "1.4.$PIPEWRIGHT_INSTANCE_ID"`,
          `echo "read back: $(${cli} scratchpad get version)"`,
          `printf 'from stdin' | ${cli} scratchpad set note -`,
        ].join('\n'),
      ),
      pipeline('notes', [{ task: 'note' }]),
      command('notes', ['notes']),
    ]);

    const result = await runCli(['commands', 'execute', 'notes', '--wait', '--json'], {
      env: connectionEnv(server, project.id),
    });

    expect(result.code, result.stderr).toBe(0);
    const pipelineId = JSON.parse(result.stdout).pipelines[0].id as string;
    const { data: tasks } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId } } });
    const output = await runCli(['tasks', 'output', tasks?.elements[0]?.id ?? ''], {
      env: connectionEnv(server, project.id),
    });
    expect(output.stdout).toContain('read back: 1.4.1\n');
    const entries = await runCli(['scratchpad', 'list', '--pipeline', pipelineId, '--json'], {
      env: connectionEnv(server, project.id),
    });
    expect(JSON.parse(entries.stdout)).toEqual({ version: '1.4.1', note: 'from stdin' });
  });
});
