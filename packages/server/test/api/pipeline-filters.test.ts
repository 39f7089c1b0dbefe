import { type ApiClient, walk } from '@pipewright/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { command, pipeline, projectWith, resourceId, task, trigger } from '../helpers/projects.js';
import { sharedTestServer } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';

// GET /pipelines narrowed on the server by name, trigger, command and period of creation, each
// filter alone and together, over every page.

const server = sharedTestServer();
let client: ApiClient;
/** The pipelines made: by the command (build, test), then by the trigger (test). */
let byCommand: { build: string; test: string };
/** The command's two pipelines as lists give them: created at the same time, so by id. */
let commandPipelines: string[];
let byTrigger: string;
let commandId: string;
let triggerId: string;

beforeAll(async () => {
  const noop = task('noop', { steps: [{ command: 'true' }] });
  const project = await projectWith(server, [
    noop,
    pipeline('build', [{ task: 'noop' }], { concurrent: true }),
    pipeline('test', [{ task: 'noop' }], { concurrent: true }),
    command('ship', ['build', 'test']),
    trigger('on-push', 'push', ['test']),
  ]);
  client = project.client;
  commandId = await resourceId(client, 'command', 'ship');
  triggerId = await resourceId(client, 'trigger', 'on-push');
  const { data: execution } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: commandId } },
    body: { parameters: {} },
  });
  const [build = '', test = ''] = execution?.pipeline_ids ?? [];
  byCommand = { build, test };
  commandPipelines = [build, test].sort();
  // The event's pipeline must be created in a later millisecond than the command's two.
  const commandTime = Date.parse(await creationTime(build));
  await waitFor(
    async () => Date.now(),
    (now) => now > commandTime,
  );
  await client.POST('/events', { body: { connector: 'custom', name: 'push', data: {} } });
  const { data: pushed } = await client.GET('/pipelines', { params: { query: { trigger_id: triggerId } } });
  byTrigger = pushed?.elements[0]?.id ?? '';
});

type Query = Parameters<typeof walk<'/pipelines'>>[2];

/** The ids of every pipeline the query lists, page by page (pages of 1: filters hold across pages). */
async function ids(query: Query): Promise<string[]> {
  const found: string[] = [];
  for await (const p of walk(client, '/pipelines', { size: 1, sort: 'creation_time', ...query }))
    found.push(p.id);
  return found;
}

async function creationTime(id: string): Promise<string> {
  const { data } = await client.GET('/pipelines/id/{id}', { params: { path: { id } } });
  return data?.creation_time ?? '';
}

describe('listPipelines', () => {
  it('filters by name', async () => {
    expect(await ids({ name: 'test' })).toEqual([byCommand.test, byTrigger]);
    expect(await ids({ name: 'build' })).toEqual([byCommand.build]);
    expect(await ids({ name: 'nothing-of-that-name' })).toEqual([]);
  });

  it('filters by the trigger and by the command that started them', async () => {
    expect(await ids({ trigger_id: triggerId })).toEqual([byTrigger]);
    expect(await ids({ command_id: commandId })).toEqual(commandPipelines);
    // Identifiers of nothing, or of another kind of resource, give empty pages.
    expect(await ids({ command_id: triggerId })).toEqual([]);
  });

  it('filters by a period of creation: from its start, included, to its end, excluded', async () => {
    // The command's two pipelines were created together, the event's one later.
    const start = await creationTime(byCommand.test);
    const end = await creationTime(byTrigger);
    expect(await ids({ creation_time_since: end })).toEqual([byTrigger]);
    expect(await ids({ creation_time_before: end })).toEqual(commandPipelines);
    // Of one creation time, the two come by id.
    expect(await ids({ creation_time_since: start, creation_time_before: end })).toEqual(commandPipelines);
    expect(await ids({ creation_time_since: end, creation_time_before: end })).toEqual([]);
    // Any offset: the same moment two hours ahead of UTC.
    const shifted = new Date(Date.parse(end) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect(await ids({ creation_time_before: shifted })).toEqual(commandPipelines);
  });

  it('combines filters: each must hold', async () => {
    expect(await ids({ name: 'test', command_id: commandId })).toEqual([byCommand.test]);
    expect(await ids({ name: 'test', trigger_id: triggerId, order: 'desc' })).toEqual([byTrigger]);
    expect(await ids({ name: 'build', trigger_id: triggerId })).toEqual([]);
    const end = await creationTime(byTrigger);
    expect(await ids({ name: 'test', creation_time_since: end, sort: 'id' })).toEqual([byTrigger]);
    expect(await ids({ name: 'test', creation_time_before: end, order: 'desc' })).toEqual([byCommand.test]);
  });

  it.each([
    ['creation_time_since', 'yesterday'],
    ['creation_time_before', '2026-11-22'],
    ['name', 'Not A Name'],
    ['trigger_id', 'nope'],
  ])('refuses a malformed %s with invalid_query_parameter', async (parameter, value) => {
    await expect(
      client.GET('/pipelines', { params: { query: { [parameter]: value } } }),
    ).rejects.toMatchObject({ status: 400, code: 'invalid_query_parameter', data: { parameter } });
  });
});
