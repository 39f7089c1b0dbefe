import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Schemas, walk } from '@pipewright/client';
import { afterAll, describe, expect } from 'vitest';
import { cleanUpHomes, connectionEnv, runCli, temporaryHome } from './helpers/cli.js';
import { it, projectWith, type RunningServer } from './helpers/server.js';
import { runCliOnTerminal } from './helpers/terminal.js';

afterAll(cleanUpHomes);

/** A directory holding these files (paths relative to it). */
function directoryWith(files: Record<string, string>): string {
  const dir = temporaryHome();
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

const BUILD_SCRIPT = 'echo "building $VERSION"\nmake all\n';

/** Several files, several documents per file, a `source` step, and files that must be skipped. */
const PROJECT_FILES = {
  'tasks/build.yaml': [
    'type: task',
    'version: 1',
    'name: build',
    'data:',
    '  steps:',
    '    - label: Build',
    '      source: ../scripts/build.sh',
    '---',
    'type: task',
    'version: 1',
    'name: check',
    'data:',
    '  steps: [{ code: "echo checking" }]',
    '---',
    '',
  ].join('\n'),
  'scripts/build.sh': BUILD_SCRIPT,
  'pipelines.yml': [
    'type: pipeline',
    'version: 1',
    'name: ci',
    'data:',
    '  tasks:',
    '    - task: build',
    '    - task: check',
    '      dependencies: [build]',
    '---',
    'type: command',
    'version: 1',
    'name: release',
    'data:',
    '  parameters: [{ name: version, type: string, environment: VERSION }]',
    '  pipelines: [ci]',
  ].join('\n'),
  // Skipped: a hidden directory, a hidden file, what .pipewrightignore names, node_modules,
  // and what the .gitignore files ignore, each in its own directory.
  '.drafts/broken.yaml': 'type: nonsense\n',
  'tasks/.old.yaml': 'type: nonsense\n',
  'experiments/trial.yaml': 'type: nonsense\n',
  'tasks/scratch.yml': 'type: nonsense\n',
  '.pipewrightignore': '# not ready\nexperiments/\nscratch.yml\n!keep.gen.yaml\n',
  'node_modules/some-library/ci.yaml': 'type: nonsense\n',
  'tools/node_modules/other/ci.yml': 'type: nonsense\n',
  '.gitignore': '/generated/\n*.gen.yaml\n',
  'generated/out.yaml': 'type: nonsense\n',
  'tasks/build.gen.yaml': 'type: nonsense\n',
  'tasks/.gitignore': 'local-*.yaml\n',
  'tasks/local-trial.yaml': 'type: nonsense\n',
  // Ignored by the .gitignore, re-included by the .pipewrightignore, which has the last word.
  'keep.gen.yaml': 'type: task\nversion: 1\nname: kept\ndata:\n  steps: [{ code: "true" }]\n',
};

async function installedSpecs(client: ReturnType<RunningServer['client']>) {
  const specs: Schemas['ResourceSpec'][] = [];
  for await (const resource of walk(client, '/resources', { sort: 'name' })) specs.push(resource.spec);
  return specs;
}

describe('pipewright deploy', () => {
  it('installs every spec of the YAML files of a directory, with step sources inlined', async ({
    server,
  }) => {
    const { project, client } = await projectWith(server);
    const dir = directoryWith(PROJECT_FILES);

    const result = await runCli(['deploy', dir], { env: connectionEnv(server, project.id) });

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'Created command release',
        'Created pipeline ci',
        'Created task build',
        'Created task check',
        'Created task kept',
        '5 created, 0 updated, 0 deleted, 0 unchanged.',
        '',
      ].join('\n'),
    );
    const specs = await installedSpecs(client);
    expect(specs.map((spec) => `${spec.type} ${spec.name}`).sort()).toEqual([
      'command release',
      'pipeline ci',
      'task build',
      'task check',
      'task kept',
    ]);
    const build = specs.find((spec) => spec.name === 'build');
    expect(build?.data).toEqual({ steps: [{ label: 'Build', code: BUILD_SCRIPT }] });
  });

  it('deploys the current directory by default, to the project of the nearest pipewright.json', async ({
    server,
  }) => {
    const { project, client } = await projectWith(server);
    const dir = directoryWith({
      ...PROJECT_FILES,
      'pipewright.json': JSON.stringify({ project: project.name }),
    });
    const { PIPEWRIGHT_PROJECT_ID: _, ...env } = connectionEnv(server);

    const fromParent = await runCli(['deploy'], { env, cwd: dir });
    // From a subdirectory, the nearest pipewright.json is the parent's.
    const fromChild = await runCli(['deploy', '..', '--dry-run'], { env, cwd: join(dir, 'scripts') });

    expect(fromParent.code).toBe(0);
    expect((await installedSpecs(client)).map((spec) => spec.name).sort()).toEqual([
      'build',
      'check',
      'ci',
      'kept',
      'release',
    ]);
    expect(fromChild.stdout).toBe(
      'Dry run: 0 to create, 0 to update, 0 to delete, 5 unchanged; nothing was changed.\n',
    );
  });

  it('shows with --dry-run what would be created, updated (field by field) and deleted, and changes nothing', async ({
    server,
  }) => {
    const { project, client } = await projectWith(server, [
      { type: 'task', version: 1, name: 'check', data: { steps: [{ code: 'echo checking' }] } },
      {
        type: 'task',
        version: 1,
        name: 'build',
        description: 'Old',
        data: { steps: [{ label: 'Build', code: 'echo old' }, { command: 'true' }] },
      },
      { type: 'task', version: 1, name: 'gone', data: { steps: [{ code: 'true' }] } },
      { type: 'task', version: 1, name: 'kept', data: { steps: [{ code: 'true' }] } },
    ]);
    const before = await installedSpecs(client);
    const dir = directoryWith(PROJECT_FILES);

    const result = await runCli(['deploy', dir, '--dry-run'], { env: connectionEnv(server, project.id) });

    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'Would create command release',
        'Would create pipeline ci',
        'Would update task build',
        `  data.steps[0].code: "echo old" -> ${JSON.stringify(BUILD_SCRIPT)}`,
        '  data.steps[1]: {"command":"true"} -> (none)',
        '  description: "Old" -> (none)',
        'Would delete task gone',
        'Dry run: 2 to create, 1 to update, 1 to delete, 2 unchanged; nothing was changed.',
        '',
      ].join('\n'),
    );
    expect(await installedSpecs(client)).toEqual(before);

    const json = await runCli(['deploy', dir, '--dry-run', '--json'], {
      env: connectionEnv(server, project.id),
    });
    expect(JSON.parse(json.stdout)).toEqual({
      dry_run: true,
      created: [
        { type: 'command', name: 'release' },
        { type: 'pipeline', name: 'ci' },
      ],
      updated: [
        {
          type: 'task',
          name: 'build',
          changes: [
            { path: 'data.steps[0].code', before: 'echo old', after: BUILD_SCRIPT },
            { path: 'data.steps[1]', before: { command: 'true' } },
            { path: 'description', before: 'Old' },
          ],
        },
      ],
      deleted: [{ type: 'task', name: 'gone' }],
      unchanged: [
        { type: 'task', name: 'check' },
        { type: 'task', name: 'kept' },
      ],
    });
  });

  it('deletes only after a yes on a terminal, and without a terminal only with --yes', async ({ server }) => {
    const gone = { type: 'task', version: 1, name: 'gone', data: { steps: [{ code: 'true' }] } };
    const { project, client } = await projectWith(server, [gone]);
    const dir = directoryWith(PROJECT_FILES);
    const env = connectionEnv(server, project.id);

    const script = await runCli(['deploy', dir], { env });
    expect(script.code).toBe(2);
    expect(script.stderr).toContain(
      'pipewright: refusing to delete 1 resource (task gone) without --yes: no terminal to confirm on',
    );
    expect((await installedSpecs(client)).map((spec) => spec.name)).toEqual(['gone']);

    const declined = await runCliOnTerminal(['deploy', dir], { env, input: 'n\n' });
    expect(declined.stdout).toContain(
      `Delete 1 resource of project ${project.id} that the files do not describe (task gone)? This cannot be undone. [y/N]`,
    );
    expect(declined.stdout).toContain('Nothing was changed.');
    expect(declined.code).toBe(1);
    expect((await installedSpecs(client)).map((spec) => spec.name)).toEqual(['gone']);

    const accepted = await runCliOnTerminal(['deploy', dir], { env, input: 'y\n' });
    expect(accepted.stdout).toContain('Deleted task gone');
    expect(accepted.code).toBe(0);
    expect((await installedSpecs(client)).map((spec) => spec.name)).not.toContain('gone');

    // Nothing to delete: nothing to ask.
    await client.PUT('/projects/id/{id}/resources', {
      params: { path: { id: project.id } },
      body: { specs: [gone as never] },
    });
    const forced = await runCli(['deploy', dir, '--yes'], { env });
    expect(forced.stdout).toContain('Deleted task gone');
    expect(forced.code).toBe(0);
    const again = await runCli(['deploy', dir], { env });
    expect(again.stdout).toContain('0 created, 0 updated, 0 deleted, 5 unchanged.');
    expect(again.code).toBe(0);
  });

  it('does not ask about deletions when the server refuses the set', async ({ server }) => {
    const { project } = await projectWith(server, [
      { type: 'task', version: 1, name: 'gone', data: { steps: [{ code: 'true' }] } },
    ]);
    const dir = directoryWith({ 'a.yaml': 'type: task\nversion: 1\nname: a\ndata: { steps: [] }\n' });

    const result = await runCli(['deploy'], { env: connectionEnv(server, project.id), cwd: dir });

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^a\.yaml:1: \/data\/steps: .+\npipewright: 1 problem in the resources/);
    expect(result.stderr).not.toContain('--yes');
  });

  it("maps the server's validation errors back to file:document: pointer", async ({ server }) => {
    const { project, client } = await projectWith(server);
    const dir = directoryWith({
      ...PROJECT_FILES,
      'pipelines.yml': PROJECT_FILES['pipelines.yml']
        .replace('- task: check', '- task: chekc')
        .replace('pipelines: [ci]', 'pipelines: [cj]'),
    });

    const result = await runCli(['deploy'], { env: connectionEnv(server, project.id), cwd: dir });

    expect(result.code).toBe(1);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^pipelines\.yml:1: \/data\/tasks\/1\/task: .*chekc/));
    expect(lines).toContainEqual(expect.stringMatching(/^pipelines\.yml:2: \/data\/pipelines\/0: .*cj/));
    expect(lines.at(-1)).toBe(
      'pipewright: 2 problems in the resources; nothing was installed (invalid_request_body)',
    );
    expect(result.stdout).toBe('');
    expect(await installedSpecs(client)).toEqual([]);
  });

  it('refuses, before sending anything, specs it cannot read', async ({ server }) => {
    const { project, client } = await projectWith(server);
    const dir = directoryWith({
      'a.yaml': 'type: task\nversion: 1\nname: a\ndata:\n  steps: [{ source: missing.sh }]\n',
      'b.yaml': 'type: task\n---\n- a list\n---\nkey: [unclosed\n',
      'c.yaml':
        'type: task\nversion: 1\nname: c\ndata:\n  steps: [{ source: /etc/hostname }, { source: ../../../../../../../../etc/hostname }]\n',
    });

    const result = await runCli(['deploy', '.'], { env: connectionEnv(server, project.id), cwd: dir });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('a.yaml:1: /data/steps/0/source: cannot read missing.sh: ENOENT');
    expect(result.stderr).toContain('b.yaml:2: a resource spec must be a mapping');
    expect(result.stderr).toMatch(/^b\.yaml:6:1: .+$/m);
    // Sources stay inside the deployed directory, by absolute path or by `..`.
    expect(result.stderr).toContain(
      'c.yaml:1: /data/steps/0/source: /etc/hostname is outside the deployed directory',
    );
    expect(result.stderr).toContain(
      'c.yaml:1: /data/steps/1/source: ../../../../../../../../etc/hostname is outside the deployed directory',
    );
    expect(result.stderr).toMatch(/\npipewright: 5 problems in the resource files; nothing was sent\n$/);
    expect(await installedSpecs(client)).toEqual([]);
  });

  it('shows a YAML mistake as one line, FILE:LINE:COLUMN: reason', async ({ server }) => {
    const { project } = await projectWith(server);
    const dir = directoryWith({
      'tasks.yaml': [
        'type: task',
        'version: 1',
        'name: build',
        'data:',
        '  steps:',
        '    - label: Build',
        '      code: make',
        '   environment: {}',
        '',
      ].join('\n'),
    });

    const result = await runCli(['deploy'], { env: connectionEnv(server, project.id), cwd: dir });

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'tasks.yaml:8:1: All mapping items must start at the same column\n' +
        'pipewright: 1 problem in the resource files; nothing was sent\n',
    );
  });
});
