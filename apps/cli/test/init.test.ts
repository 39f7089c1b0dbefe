import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { cleanUpHomes, connectionEnv, runCli, temporaryHome } from './helpers/cli.js';
import { it, projectWith, type RunningServer } from './helpers/server.js';

afterAll(cleanUpHomes);

const EXAMPLE_FILES = ['commands.yaml', 'pipelines.yaml', 'scripts/build.sh', 'tasks.yaml', 'triggers.yaml'];

/** The settings of a user who logged in but selected no project: the server and the key. */
function withoutProject(server: RunningServer): Record<string, string> {
  const { PIPEWRIGHT_PROJECT_ID: _, ...env } = connectionEnv(server);
  return env;
}

describe('pipewright init', () => {
  it('writes an example project that deploys, executes and reacts to events as it is', async ({ server }) => {
    const { project, client } = await projectWith(server);
    const parent = temporaryHome();
    const env = withoutProject(server);

    const init = await runCli(['init', 'hello', '--project', project.name], { env, cwd: parent });

    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect(init.stdout).toBe(
      [
        'Wrote an example project in hello:',
        ...[...EXAMPLE_FILES, 'pipewright.json'].map((file) => `  hello/${file}`),
        'Next:',
        '  cd hello',
        '  pipewright deploy --dry-run',
        '  pipewright deploy',
        '  pipewright commands execute release version=1.0.0 --wait',
        `  pipewright events send push '{"branch": "main"}'`,
        '',
      ].join('\n'),
    );
    const dir = join(parent, 'hello');
    expect(JSON.parse(readFileSync(join(dir, 'pipewright.json'), 'utf8'))).toEqual({ project: project.name });

    // The next steps, as printed, in the project's directory.
    const deploy = await runCli(['deploy'], { env, cwd: dir });
    expect(deploy.stderr).toBe('');
    expect(deploy.stdout).toContain('9 created, 0 updated, 0 deleted, 0 unchanged.');
    expect(deploy.stdout).toContain('Created trigger nightly');

    const execute = await runCli(['commands', 'execute', 'release', 'version=1.0.0', '--wait'], {
      env,
      cwd: dir,
    });
    expect(execute.stderr).toBe('');
    expect(execute.code).toBe(0);
    expect(execute.stdout).toMatch(/^release \w{27}: successful$/m);

    const send = await runCli(['events', 'send', 'push', '{"branch": "main"}'], { env, cwd: dir });
    expect(send.code).toBe(0);
    expect(send.stdout).toMatch(/^Sent event push: 1 trigger accepted it, 1 pipeline started\.\n/);
    const started = /^(\w{27}) +check +(\w{27}) /m.exec(send.stdout);
    expect(started).not.toBeNull();
    const [, pipelineId = '', eventId = ''] = started ?? [];
    const { data: pipeline } = await client.GET('/pipelines/id/{id}', {
      params: { path: { id: pipelineId } },
    });
    expect(pipeline).toMatchObject({ name: 'check', event_id: eventId });

    const watch = await runCli(['pipelines', 'watch', pipelineId], { env, cwd: dir });
    expect(watch.code).toBe(0);
    // The task report shows the event that started the pipeline.
    const { data: tasks } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId } } });
    const report = tasks?.elements.find((task) => task.name === 'show-event');
    const output = await runCli(['tasks', 'output', report?.id ?? ''], { env, cwd: dir });
    expect(output.stdout).toContain('"data":{"branch":"main"}');

    // Another branch is not checked.
    const other = await runCli(['events', 'send', 'push', '{"branch": "dev"}'], { env, cwd: dir });
    expect(other.stderr).toBe('No trigger accepted the event.\n');
  });

  it('names the project after the directory when none is selected, and says to create it', async () => {
    const parent = temporaryHome();

    const result = await runCli(['init', 'My Shop!'], { cwd: parent });

    expect(result.code).toBe(0);
    expect(JSON.parse(readFileSync(join(parent, 'My Shop!', 'pipewright.json'), 'utf8'))).toEqual({
      project: 'my-shop-',
    });
    expect(result.stdout).toContain(
      '  cd My Shop!\n  pipewright projects create my-shop-    # unless it exists\n',
    );
  });

  it('writes into the current directory by default and keeps its pipewright.json', async () => {
    const dir = temporaryHome();
    writeFileSync(join(dir, 'pipewright.json'), '{"project": "mine"}\n');

    const result = await runCli(['init'], { cwd: dir });

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Kept pipewright.json.\nNext:\n  pipewright deploy --dry-run\n');
    expect(readFileSync(join(dir, 'pipewright.json'), 'utf8')).toBe('{"project": "mine"}\n');
    for (const file of EXAMPLE_FILES) expect(existsSync(join(dir, file))).toBe(true);
  });

  it('refuses to overwrite a file, and then writes nothing', async () => {
    const dir = temporaryHome();
    mkdirSync(join(dir, 'scripts'));
    writeFileSync(join(dir, 'scripts', 'build.sh'), 'mine\n');

    const result = await runCli(['init', dir]);

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `pipewright: refusing to overwrite ${join(dir, 'scripts', 'build.sh')}; nothing was written\n`,
    );
    expect(readdirSync(dir, { recursive: true }).sort()).toEqual(['scripts', join('scripts', 'build.sh')]);
    expect(readFileSync(join(dir, 'scripts', 'build.sh'), 'utf8')).toBe('mine\n');
  });
});
