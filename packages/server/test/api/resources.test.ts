import { type ApiError, type Schemas, walk } from '@pipewright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../helpers/raw.js';
import { startTestServer, type TestServer, uniqueName } from '../helpers/test-server.js';

type Resource = Schemas['Resource'];
type ResourceType = Resource['spec']['type'];
/**
 * A spec as a user writes it. The generated spec types make members with a default
 * required (as responses of filled-in objects have them); installed specs may omit them.
 */
type Spec = { type: ResourceType; version: number; name: string; data: object; description?: string };

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const task = (name: string, extra: Record<string, unknown> = {}): Spec => ({
  type: 'task',
  version: 1,
  name,
  data: { steps: [{ code: `echo ${name}` }], ...extra },
});
const pipeline = (name: string, ...tasks: string[]): Spec => ({
  type: 'pipeline',
  version: 1,
  name,
  data: { tasks: tasks.map((t) => ({ task: t })) },
});
const command = (name: string, pipelines: string[]): Spec => ({
  type: 'command',
  version: 1,
  name,
  description: `Runs ${pipelines.join(', ')}.`,
  data: { parameters: [{ name: 'version', type: 'string', environment: 'VERSION' }], pipelines },
});
const trigger = (name: string, pipelines: string[]): Spec => ({
  type: 'trigger',
  version: 1,
  name,
  data: {
    connector: 'custom',
    event: 'push',
    filters: [{ path: '/branch', is_equal_to: 'main' }],
    pipelines,
  },
});

/** A small complete set: two tasks, a pipeline using both, a command and a trigger. */
const basicSet = (): Spec[] => [
  task('build'),
  task('test'),
  pipeline('ci', 'build', 'test'),
  command('ci', ['ci']),
  trigger('push', ['ci']),
];

async function newProject(apiKey = server.adminKey) {
  const { data } = await server.client(apiKey).POST('/projects', { body: { name: uniqueName('p') } });
  if (!data) throw new Error('no project');
  return data;
}

function install(projectId: string, specs: unknown[], options: { apiKey?: string; dryRun?: boolean } = {}) {
  return server.client(options.apiKey).PUT('/projects/id/{id}/resources', {
    params: { path: { id: projectId }, query: options.dryRun ? { 'dry-run': 'true' } : {} },
    body: { specs: specs as Schemas['ResourceSpec'][] },
  });
}

/** The problems of a rejected installation. */
async function rejection(promise: Promise<unknown>) {
  const error = (await promise.then(
    () => {
      throw new Error('the installation was accepted');
    },
    (e: unknown) => e,
  )) as ApiError;
  expect(error).toMatchObject({ status: 400, code: 'invalid_request_body' });
  return (error.data as { jsv_errors: { pointer: string; reason: string }[] }).jsv_errors;
}

async function resourcesOf(projectId: string): Promise<Resource[]> {
  const all: Resource[] = [];
  for await (const resource of walk(server.client(undefined, projectId), '/resources', { size: 100 }))
    all.push(resource);
  return all;
}

/** `type/name` of each resource, sorted. */
const keys = (resources: { type: string; name: string }[]) =>
  resources.map((r) => `${r.type}/${r.name}`).sort();
const byKey = (resources: Resource[]) => new Map(resources.map((r) => [`${r.spec.type}/${r.spec.name}`, r]));

/** Lets the clock move on, so that a later write gets a later time. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('installResources', () => {
  it('creates the resources of a set with their specs exactly as installed, and answers 204', async () => {
    const project = await newProject();
    // Members in an unusual order, and an optional member left out: the spec comes back as sent.
    const odd = {
      data: { steps: [{ code: 'true', label: 'Check' }] },
      name: 'check',
      version: 1,
      type: 'task',
    };
    const { response } = await install(project.id, [...basicSet(), odd]);
    expect(response.status).toBe(204);

    const resources = await resourcesOf(project.id);
    expect(keys(resources.map((r) => r.spec))).toEqual(keys([...basicSet(), odd]));
    const org = await server.client().GET('/org');
    for (const resource of resources) {
      expect(resource).toMatchObject({ org_id: org.data?.id, project_id: project.id, disabled: false });
      expect(resource.update_time).toBe(resource.creation_time);
    }
    expect(JSON.stringify(byKey(resources).get('task/check')?.spec)).toBe(JSON.stringify(odd));
    expect(byKey(resources).get('pipeline/ci')?.spec).toEqual(pipeline('ci', 'build', 'test'));
  });

  it('keeps unchanged resources as they are, updates changed ones in place, deletes missing ones', async () => {
    const project = await newProject();
    await install(project.id, basicSet());
    const before = byKey(await resourcesOf(project.id));
    await tick();

    const changed = task('test', { environment: { CI: 'true' } });
    // The unchanged command is sent with its members reordered: still the same spec.
    const { type, version, name, description, data } = command('ci', ['ci']);
    const reordered = { data, description, name, version, type };
    await install(project.id, [task('build'), changed, pipeline('ci', 'build', 'test'), reordered]);
    const after = byKey(await resourcesOf(project.id));

    expect([...after.keys()].sort()).toEqual(['command/ci', 'pipeline/ci', 'task/build', 'task/test']);
    for (const key of ['task/build', 'pipeline/ci', 'command/ci'])
      expect(after.get(key)).toEqual(before.get(key));
    const updated = after.get('task/test');
    expect(updated).toMatchObject({ id: before.get('task/test')?.id, spec: changed });
    expect(updated?.creation_time).toBe(before.get('task/test')?.creation_time);
    expect(Date.parse(updated?.update_time ?? '')).toBeGreaterThan(Date.parse(updated?.creation_time ?? ''));

    const deleted = before.get('trigger/push')?.id ?? '';
    await expect(
      server.client(undefined, project.id).GET('/resources/id/{id}', { params: { path: { id: deleted } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_resource' });
  });

  it('treats a rename as a deletion and a creation', async () => {
    const project = await newProject();
    await install(project.id, [task('build')]);
    const [old] = await resourcesOf(project.id);
    await install(project.id, [task('compile')]);
    const [renamed] = await resourcesOf(project.id);
    expect(renamed?.spec.name).toBe('compile');
    expect(renamed?.id).not.toBe(old?.id);
  });

  it('removes every resource when given an empty set', async () => {
    const project = await newProject();
    await install(project.id, basicSet());
    await install(project.id, []);
    expect(await resourcesOf(project.id)).toEqual([]);
  });

  it('reports every problem of the set at once, with pointers and reasons, and changes nothing', async () => {
    const project = await newProject();
    await install(project.id, basicSet());
    const before = await resourcesOf(project.id);

    const problems = await rejection(
      install(project.id, [
        task('build', { steps: [{ command: 'make', code: 'make' }] }), // invalid, but still defines "build"
        task('test', { parameters: [{ name: 'shard', type: 'number', values: ['1'] }] }),
        {
          type: 'pipeline',
          version: 1,
          name: 'ci',
          data: { tasks: [{ task: 'build' }, { task: 'tset', dependencies: ['biuld'] }] },
        },
        command('ci', ['cii']),
        { type: 'job', version: 1, name: 'x', data: {} },
        task('test'),
      ]),
    );
    expect(problems).toEqual([
      { pointer: '/specs/0/data/steps/0', reason: 'must have only one of "command" and "code"' },
      { pointer: '/specs/1/data/parameters/0/values', reason: 'is not allowed when type is "number"' },
      { pointer: '/specs/2/data/tasks/1/task', reason: 'unknown task "tset" (did you mean "test"?)' },
      {
        pointer: '/specs/2/data/tasks/1/dependencies/0',
        reason: 'no entry of the pipeline is named "biuld" (did you mean "build"?)',
      },
      { pointer: '/specs/3/data/pipelines/0', reason: 'unknown pipeline "cii" (did you mean "ci"?)' },
      { pointer: '/specs/4/type', reason: 'must be "trigger", "command", "pipeline" or "task"' },
      { pointer: '/specs/5/name', reason: 'a task named "test" is already defined at /specs/1' },
    ]);
    expect(await resourcesOf(project.id)).toEqual(before);
  });

  it('reports a pipeline cycle and parameters that do not match the task', async () => {
    const project = await newProject();
    const release = task('release', {
      parameters: [{ name: 'channel', type: 'string', values: ['stable', 'beta'] }],
    });
    const problems = await rejection(
      install(project.id, [
        release,
        task('build'),
        {
          type: 'pipeline',
          version: 1,
          name: 'deploy',
          data: {
            tasks: [
              { task: 'build', dependencies: ['release'] },
              { task: 'release', dependencies: ['build'], parameters: { channel: 'nightly' } },
              { name: 'again', task: 'release', parameters: { chanel: 'beta' } },
            ],
          },
        },
      ]),
    );
    expect(problems).toEqual([
      {
        pointer: '/specs/2/data/tasks/1/parameters/channel',
        reason: 'must be one of the values of parameter "channel" of task "release": "stable" or "beta"',
      },
      {
        pointer: '/specs/2/data/tasks/2/parameters/chanel',
        reason: 'task "release" has no parameter "chanel" (did you mean "channel"?)',
      },
      {
        pointer: '/specs/2/data/tasks/2/parameters/channel',
        reason: 'is required: task "release" declares parameter "channel" without a default',
      },
      {
        pointer: '/specs/2/data/tasks/1/dependencies/0',
        reason: 'dependency cycle: release -> build -> release',
      },
    ]);
  });

  it('lets the validator report what is wrong with the body around the specs', async () => {
    const project = await newProject();
    const answer = await rawRequest(server.baseUrl, server.ca, {
      method: 'PUT',
      path: `/v0/projects/id/${project.id}/resources`,
      headers: { authorization: `Bearer ${server.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ spec: [] }),
    });
    expect(answer.status).toBe(400);
    const body = answer.json as { code: string; data: { jsv_errors: { pointer: string }[] } };
    expect(body.code).toBe('invalid_request_body');
    const pointers = body.data.jsv_errors.map((e) => e.pointer);
    expect(pointers.sort()).toEqual(['/spec', '/specs']);
  });

  it('leaves the first set intact when the next one is rejected', async () => {
    const project = await newProject();
    await install(project.id, basicSet());
    const before = await resourcesOf(project.id);
    // Valid changes (a deletion, a creation, an update) alongside one invalid spec.
    await rejection(
      install(project.id, [task('build', { environment: { CI: '1' } }), task('lint'), task('Bad')]),
    );
    expect(await resourcesOf(project.id)).toEqual(before);
  });

  describe('with ?dry-run', () => {
    const installRaw = (projectId: string, query: string, specs: unknown[]) =>
      rawRequest(server.baseUrl, server.ca, {
        method: 'PUT',
        path: `/v0/projects/id/${projectId}/resources${query}`,
        headers: { authorization: `Bearer ${server.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ specs }),
      });

    it.each(['?dry-run', '?dry-run=', '?dry-run=true'])(
      'validates and changes nothing with %s',
      async (query) => {
        const project = await newProject();
        await install(project.id, [task('build')]);
        const before = await resourcesOf(project.id);
        expect((await installRaw(project.id, query, basicSet())).status).toBe(204);
        expect(await resourcesOf(project.id)).toEqual(before);
        const invalid = await installRaw(project.id, query, [pipeline('ci', 'nothing')]);
        expect(invalid.status).toBe(400);
        expect(invalid.json?.data).toEqual({
          jsv_errors: [{ pointer: '/specs/0/data/tasks/0/task', reason: 'unknown task "nothing"' }],
        });
      },
    );

    it('applies the set with ?dry-run=false', async () => {
      const project = await newProject();
      expect((await installRaw(project.id, '?dry-run=false', [task('build')])).status).toBe(204);
      expect(keys((await resourcesOf(project.id)).map((r) => r.spec))).toEqual(['task/build']);
    });

    it('rejects another value with invalid_query_parameter', async () => {
      const project = await newProject();
      const answer = await installRaw(project.id, '?dry-run=yes', [task('build')]);
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ code: 'invalid_query_parameter', data: { parameter: 'dry-run' } });
    });

    it('is what the client sends with dry-run true', async () => {
      const project = await newProject();
      const { response } = await install(project.id, basicSet(), { dryRun: true });
      expect(response.status).toBe(204);
      expect(await resourcesOf(project.id)).toEqual([]);
    });
  });

  it("answers unknown_project for another organization's project or no project at all", async () => {
    const foreign = await newProject(await server.newOrganization());
    await expect(install(foreign.id, basicSet())).rejects.toMatchObject({
      status: 404,
      code: 'unknown_project',
    });
    await expect(install('2Fv9zQx0bY3kLmN8pQrStUvWxYz', basicSet())).rejects.toMatchObject({
      status: 404,
      code: 'unknown_project',
    });
    expect(await resourcesOf(foreign.id).catch((e: ApiError) => e.code)).toBe('unknown_project');
  });

  it('lets a user account install', async () => {
    const project = await newProject();
    const { response } = await install(project.id, basicSet(), {
      apiKey: await server.newAccount('default', 'user'),
    });
    expect(response.status).toBe(204);
    expect(await resourcesOf(project.id)).toHaveLength(basicSet().length);
  });

  it('serializes concurrent installations into a project: the result is one set, not a mix', async () => {
    const project = await newProject();
    const first = Array.from({ length: 50 }, (_, i) => task(`first-${i}`));
    const second = Array.from({ length: 50 }, (_, i) => task(`second-${i}`));
    await Promise.all([install(project.id, first), install(project.id, second), install(project.id, first)]);
    const installed = keys((await resourcesOf(project.id)).map((r) => r.spec));
    expect([keys(first), keys(second)]).toContainEqual(installed);
  });

  it('shows readers the whole set before or after, never a part, while a large set is installed in slices', async () => {
    const project = await newProject();
    const before = Array.from({ length: 3000 }, (_, i) => task(`t${i}`));
    await install(project.id, before);
    // Changes of every kind, many enough to be staged over several slices: every task but the
    // last updated, the last deleted, one created.
    const changed = (name: string) => task(name, { environment: { CHANGED: 'yes' } });
    const after = [...before.slice(0, -1).map((spec) => changed(spec.name)), task('n0')];
    const client = server.client(undefined, project.id);
    const read = (name: string) =>
      client.GET('/resources/type/{type}/name/{name}', { params: { path: { type: 'task', name } } }).then(
        ({ data }) => data,
        () => undefined,
      );
    const isChanged = (resource: Resource | undefined) =>
      resource?.spec.type === 'task' && resource.spec.data.environment !== undefined;
    // One read after another, in the order a partial write would change them (deletions,
    // updates, creations): once a read sees the new set, every later read must see it too.
    const look = async () => [
      (await read('t2999')) === undefined,
      isChanged(await read('t0')),
      isChanged(await read('t2998')),
      (await read('n0')) !== undefined,
    ];
    let done = false;
    const installing = install(project.id, after).finally(() => {
      done = true;
    });
    const seen: boolean[][] = [];
    let lookedDuring = 0;
    while (!done) {
      seen.push(await look());
      if (!done) lookedDuring += 1;
    }
    await installing;
    seen.push(await look());
    // The readers ran while the installation was in flight, and none saw the new set, then the old.
    expect(lookedDuring).toBeGreaterThan(0);
    const reads = seen.flat();
    expect(reads.slice(reads.indexOf(true))).not.toContain(false);
    expect(seen.at(-1)).toEqual([true, true, true, true]);
  });

  it('installs a set of 1,000 specs, and installs it again without changing anything', async () => {
    const project = await newProject();
    const specs: Spec[] = [];
    for (let i = 0; i < 250; i += 1) {
      specs.push(task(`build-${i}`), task(`test-${i}`), pipeline(`ci-${i}`, `build-${i}`, `test-${i}`));
      specs.push(i % 2 ? command(`run-${i}`, [`ci-${i}`]) : trigger(`on-${i}`, [`ci-${i}`]));
    }
    await install(project.id, specs);
    const first = await resourcesOf(project.id);
    expect(keys(first.map((r) => r.spec))).toEqual(keys(specs));
    await tick();
    await install(project.id, specs);
    expect(await resourcesOf(project.id)).toEqual(first);
  });
});

describe('listResources', () => {
  it('filters by type, sorts by name in both orders, and pages through every resource', async () => {
    const project = await newProject();
    const names = ['delta', 'alpha', 'echo', 'charlie', 'bravo'];
    await install(project.id, [...names.map((name) => task(name)), pipeline('alpha', 'alpha')]);
    const client = server.client(undefined, project.id);

    const ascending: string[] = [];
    for await (const r of walk(client, '/resources', { type: 'task', sort: 'name', size: 2 }))
      ascending.push(r.spec.name);
    expect(ascending).toEqual([...names].sort());
    const descending: string[] = [];
    for await (const r of walk(client, '/resources', { type: 'task', sort: 'name', order: 'desc', size: 3 }))
      descending.push(r.spec.name);
    expect(descending).toEqual([...names].sort().reverse());

    const pipelines = await client.GET('/resources', { params: { query: { type: 'pipeline' } } });
    expect(pipelines.data?.elements.map((r) => r.spec.name)).toEqual(['alpha']);

    // Equal names of different types keep a stable order: by id.
    const all: Resource[] = [];
    for await (const r of walk(client, '/resources', { sort: 'name', size: 1 })) all.push(r);
    expect(all.map((r) => r.spec.name)).toEqual(['alpha', 'alpha', 'bravo', 'charlie', 'delta', 'echo']);
    expect((all[0]?.id ?? '') < (all[1]?.id ?? '')).toBe(true);
  });

  it('shows only the resources of the project in the header', async () => {
    const [mine, other] = [await newProject(), await newProject()];
    await install(mine.id, [task('build')]);
    await install(other.id, [task('test')]);
    expect(keys((await resourcesOf(mine.id)).map((r) => r.spec))).toEqual(['task/build']);
  });

  it('rejects an unknown type', async () => {
    const project = await newProject();
    const answer = await rawRequest(server.baseUrl, server.ca, {
      method: 'GET',
      path: '/v0/resources?type=job',
      headers: { authorization: `Bearer ${server.adminKey}`, 'x-service-project-id': project.id },
    });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ code: 'invalid_query_parameter', data: { parameter: 'type' } });
  });
});

describe('getResource', () => {
  it('answers a resource of the project by id', async () => {
    const project = await newProject();
    await install(project.id, basicSet());
    const [resource] = await resourcesOf(project.id);
    const { data } = await server
      .client(undefined, project.id)
      .GET('/resources/id/{id}', { params: { path: { id: resource?.id ?? '' } } });
    expect(data).toEqual(resource);
  });

  it("answers unknown_resource for another project's resource", async () => {
    const [mine, other] = [await newProject(), await newProject()];
    await install(other.id, [task('build')]);
    const [resource] = await resourcesOf(other.id);
    await expect(
      server
        .client(undefined, mine.id)
        .GET('/resources/id/{id}', { params: { path: { id: resource?.id ?? '' } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_resource' });
  });
});

describe('getResourceByTypeAndName', () => {
  it('answers the resource of a type with a name, another type being another resource', async () => {
    const project = await newProject();
    await install(project.id, basicSet());
    const client = server.client(undefined, project.id);
    const get = (type: ResourceType, name: string) =>
      client.GET('/resources/type/{type}/name/{name}', { params: { path: { type, name } } });
    const asPipeline = await get('pipeline', 'ci');
    const asCommand = await get('command', 'ci');
    expect(asPipeline.data?.spec).toEqual(pipeline('ci', 'build', 'test'));
    expect(asCommand.data?.spec).toEqual(command('ci', ['ci']));
    await expect(get('trigger', 'ci')).rejects.toMatchObject({ status: 404, code: 'unknown_resource' });
  });
});
