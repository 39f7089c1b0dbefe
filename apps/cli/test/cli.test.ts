import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { cleanUpHomes, connectionEnv, runCli, temporaryHome } from './helpers/cli.js';
import { it, projectWith, type RunningServer, uniqueName } from './helpers/server.js';

afterAll(cleanUpHomes);

const command = (name: string) => ({
  type: 'command',
  version: 1,
  name,
  data: { parameters: [], pipelines: ['p'] },
});
/** A project whose only command is named `marker`, to tell which project a call went to. */
const markedProject = async (server: RunningServer, marker: string) =>
  projectWith(server, [
    { type: 'task', version: 1, name: 't', data: { steps: [{ code: 'true' }] } },
    { type: 'pipeline', version: 1, name: 'p', data: { tasks: [{ task: 't' }] } },
    command(marker),
  ]);
const commandNames = (stdout: string) =>
  (JSON.parse(stdout) as { elements: { spec: { name: string } }[] }).elements.map((e) => e.spec.name);

describe('pipewright login', () => {
  it('checks the key, then saves the settings in a file only the user can read', async ({ server }) => {
    const config = join(temporaryHome(), 'config');
    const env = { XDG_CONFIG_HOME: config };
    const { project } = await markedProject(server, 'from-login');

    const login = await runCli(
      ['login', '--api-url', server.url, '--ca', server.caFile, '--project', project.name],
      { env, input: `${server.apiKey}\n` },
    );

    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.stdout).toContain('Logged in to');
    expect(login.stdout).toContain('as admin@localhost (organization default)');
    const file = join(config, 'pipewright', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(config, 'pipewright')).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      api_url: server.url,
      api_key: server.apiKey,
      ca_file: server.caFile,
      project: project.name,
    });

    // Later commands need nothing else.
    const listed = await runCli(['commands', 'list', '--json'], { env });
    expect(listed.code).toBe(0);
    expect(commandNames(listed.stdout)).toEqual(['from-login']);
  });

  it('saves nothing when the server refuses the key', async ({ server }) => {
    const config = join(temporaryHome(), 'config');

    const login = await runCli(
      ['login', '--api-url', server.url, '--ca', server.caFile, '--api-key', 'pwk_wrong'],
      {
        env: { XDG_CONFIG_HOME: config },
      },
    );

    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/^pipewright: .+ \(invalid_api_key\)\n$/);
    expect(() => statSync(join(config, 'pipewright', 'config.json'))).toThrow();
  });
});

describe('configuration', () => {
  it('takes each setting from flags, then the environment, then pipewright.json, then the saved file', async ({
    server,
  }) => {
    const [saved, fromFile, fromEnv, fromFlag] = await Promise.all(
      ['saved', 'file', 'env', 'flag'].map((marker) => markedProject(server, marker)),
    );
    const config = join(temporaryHome(), 'config');
    const login = await runCli(
      ['login', '--api-url', server.url, '--ca', server.caFile, '--api-key', server.apiKey],
      { env: { XDG_CONFIG_HOME: config, PIPEWRIGHT_PROJECT_NAME: saved?.project.name ?? '' } },
    );
    expect(login.code).toBe(0);
    writeFileSync(
      join(config, 'pipewright', 'config.json'),
      JSON.stringify({
        ...JSON.parse(readFileSync(join(config, 'pipewright', 'config.json'), 'utf8')),
        project: saved?.project.name,
      }),
    );
    const workspace = temporaryHome();
    const nested = join(workspace, 'deep', 'er');
    mkdirSync(nested, { recursive: true });
    const list = (env: Record<string, string>, cwd: string, flags: string[] = []) =>
      runCli(['commands', 'list', '--json', ...flags], { env: { XDG_CONFIG_HOME: config, ...env }, cwd });

    expect(commandNames((await list({}, nested)).stdout)).toEqual(['saved']);
    writeFileSync(join(workspace, 'pipewright.json'), JSON.stringify({ project: fromFile?.project.name }));
    expect(commandNames((await list({}, nested)).stdout)).toEqual(['file']);
    const env = { PIPEWRIGHT_PROJECT_ID: fromEnv?.project.id ?? '' };
    expect(commandNames((await list(env, nested)).stdout)).toEqual(['env']);
    const flags = ['--project', fromFlag?.project.name ?? ''];
    expect(commandNames((await list(env, nested, flags)).stdout)).toEqual(['flag']);
    // A project may be designated by its id too.
    const byId = ['-p', fromFlag?.project.id ?? ''];
    expect(commandNames((await list(env, nested, byId)).stdout)).toEqual(['flag']);
  });

  it('never sends the saved key to another server', async ({ server }) => {
    const config = join(temporaryHome(), 'config');
    await runCli(['login', '--api-url', server.url, '--ca', server.caFile, '--api-key', server.apiKey], {
      env: { XDG_CONFIG_HOME: config },
    });

    const result = await runCli(['projects', 'list'], {
      env: { XDG_CONFIG_HOME: config, PIPEWRIGHT_API_URL: 'https://127.0.0.1:9' },
    });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('pipewright: no API key given');
  });
});

describe('listings', () => {
  it('prints a table, the raw page with --json, and every page with --all', async ({ server }) => {
    const names = Array.from({ length: 22 }, (_, index) => `event-${String(index).padStart(2, '0')}`);
    const { project, client } = await projectWith(server, [
      { type: 'task', version: 1, name: 't', data: { steps: [{ code: 'true' }] } },
      { type: 'pipeline', version: 1, name: 'p', data: { tasks: [{ task: 't' }] } },
      // Events are stored only when a trigger accepts them.
      ...names.map((name) => ({
        type: 'trigger',
        version: 1,
        name,
        data: { connector: 'custom', event: name, pipelines: ['p'] },
      })),
    ]);
    const env = connectionEnv(server, project.id);
    for (const name of names.slice(1)) {
      await client.POST('/events', { body: { connector: 'custom', name, data: { n: 1 } } });
    }
    const sent = await runCli(['events', 'send', 'event-00', '{"n": 1}', '--json'], { env });

    const table = await runCli(['events', 'list'], { env });
    const page = await runCli(['events', 'list', '--json'], { env });
    const all = await runCli(['events', 'list', '--json', '--all'], { env });

    expect(JSON.parse(sent.stdout)).toMatchObject([{ name: 'event-00', project_id: project.id }]);
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID +CONNECTOR +NAME +TIME +REPLAY OF +DATA$/);
    expect(rows).toHaveLength(20);
    // Newest first; not a terminal, so nothing is cut.
    expect(rows[0]).toMatch(/^\w{27} +custom +event-00 +\S+ +\{"n":1\}$/);
    expect(table.stderr).toContain('--all');
    const firstPage = JSON.parse(page.stdout);
    expect(firstPage.elements).toHaveLength(20);
    expect(firstPage.next).toBeDefined();
    const every = JSON.parse(all.stdout);
    expect(every.elements.map((event: { name: string }) => event.name).sort()).toEqual(names);
    expect(every.next).toBeUndefined();
  });
});

describe('errors', () => {
  it.for<[string[], string]>([
    [[], 'a command is needed'],
    [['nonsense'], 'unknown command "nonsense"'],
    [['pipelines'], 'pipelines needs a subcommand'],
    [['pipelines', 'show'], 'missing arguments'],
    [['pipelines', 'show', 'a', 'b'], 'unexpected argument "b"'],
    [['projects', 'list', '--colour'], "Unknown option '--colour'."],
    [['events', 'send', 'push', '{nope'], 'the event data is not JSON'],
  ])('exits 2 with the usage for %j', async ([args, message], { server }) => {
    const result = await runCli(args, { env: connectionEnv(server) });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`pipewright: ${message}`);
    expect(result.stderr).toContain('Usage: pipewright');
    expect(result.stdout).toBe('');
  });

  it('exits 2 when no project is selected', async ({ server }) => {
    const result = await runCli(['pipelines', 'list'], { env: connectionEnv(server) });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('pipewright: no project selected');
  });

  it("exits 1 with one line holding the server's message and code", async ({ server }) => {
    const { project } = await projectWith(server);

    const unknown = await runCli(['pipelines', 'show', '2Fv9zQx0bY3kLmN8pQrStUvWxYz'], {
      env: connectionEnv(server, project.id),
    });
    const duplicate = await runCli(['projects', 'create', project.name], { env: connectionEnv(server) });

    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^pipewright: .+ \(unknown_pipeline\)\n$/);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toMatch(/^pipewright: .+ \(duplicate_project_name\)\n$/);
  });

  it.each([
    [[]],
    [['login']],
    [['deploy']],
    [['projects']],
    [['projects', 'delete']],
    [['commands', 'execute']],
    [['pipelines', 'restart-from-failure']],
    [['tasks', 'output']],
    [['events', 'send']],
    [['scratchpad', 'set']],
  ])('prints the help of %j with --help and exits 0', async (args) => {
    const result = await runCli([...args, '--help']);

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: pipewright /);
    expect(result.stderr).toBe('');
  });
});

describe('pipewright projects', () => {
  it('creates, renames and deletes a project, asking for --yes without a terminal', async ({ server }) => {
    const env = connectionEnv(server);
    const name = uniqueName('crud');

    const created = await runCli(['projects', 'create', name, '--json'], { env });
    const renamed = await runCli(['projects', 'rename', name, `${name}-2`], { env });
    const refused = await runCli(['projects', 'delete', `${name}-2`], { env });
    const listed = await runCli(['projects', 'list', '--all'], { env });
    const deleted = await runCli(['projects', 'delete', `${name}-2`, '--yes'], { env });
    const gone = await runCli(['projects', 'list', '--all', '--json'], { env });

    expect(JSON.parse(created.stdout)).toMatchObject({ name });
    expect(renamed.stdout).toBe(`Renamed project ${name} to ${name}-2.\n`);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`refusing to delete project ${name}-2 without --yes`);
    expect(listed.stdout).toMatch(new RegExp(`^${name}-2 +\\w{27}$`, 'm'));
    expect(deleted.code).toBe(0);
    const names = JSON.parse(gone.stdout).elements.map((project: { name: string }) => project.name);
    expect(names).not.toContain(`${name}-2`);
  });
});
