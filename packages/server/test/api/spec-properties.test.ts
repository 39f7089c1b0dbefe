import type { ApiClient, ApiError, Schemas } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import {
  command,
  finished,
  pipeline,
  projectWith,
  resourceId,
  stepsOf,
  task,
  tasksOf,
  trigger,
} from '../helpers/projects.js';
import { sharedTestServer } from '../helpers/test-server.js';

// What properties of the specs and request bodies do, where no other test shows it:
// test/spec-coverage.ts names these tests for them.

// The ticker runs on a clock of the test's own, and only when a test runs a pass.
let now = new Date();
const server = sharedTestServer({ ticker: { clock: () => now } });

const DAY_MS = 86_400_000;
const noop = task('noop', { steps: [{ command: 'true' }] });

/** Executes command `name` of the project; returns its execution. */
async function execute(client: ApiClient, name: string) {
  const { data } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: await resourceId(client, 'command', name) } },
    body: {},
  });
  if (!data) throw new Error(`no execution of ${name}`);
  return data;
}

/** The names of the pipelines of the project, sorted. */
async function pipelineNames(client: ApiClient) {
  const { data } = await client.GET('/pipelines', { params: { query: { size: 100 } } });
  return (data?.elements ?? []).map((p) => p.name).sort();
}

/** A project in a fresh organization, whose events reach no other test's triggers. */
async function organizationWith(specs: unknown[]) {
  const apiKey = await server.newOrganization();
  const { client } = await projectWith(server, specs, apiKey);
  const send = async (name: string, data: Record<string, unknown> = {}) =>
    (await server.client(apiKey).POST('/events', { body: { connector: 'custom', name, data } })).data ?? [];
  return { client, send };
}

describe('resource specs', () => {
  it('installs each type of spec as a resource of that type, found by type and name, as installed', async () => {
    const parameter = { name: 'target', type: 'string', default: 'staging', description: 'Where it goes.' };
    const specs = [
      {
        ...task('same', { parameters: [parameter], steps: [{ command: 'true' }] }),
        description: 'A task.',
      },
      { ...pipeline('same', [{ task: 'same' }]), description: 'A pipeline.' },
      { ...command('same', ['same'], [parameter]), description: 'A command.' },
      { ...trigger('same', 'push', ['same']), description: 'A trigger.' },
    ];
    const { client } = await projectWith(server, specs);
    const ids = new Set<string>();
    for (const spec of specs) {
      const { data } = await client.GET('/resources/type/{type}/name/{name}', {
        params: { path: { type: spec.type as Schemas['ResourceSpec']['type'], name: 'same' } },
      });
      expect(data?.spec).toEqual(spec);
      ids.add(data?.id ?? '');
    }
    expect(ids.size).toBe(4);
  });

  it('refuses a spec of another version, or whose data is not of its type', async () => {
    const { project } = await projectWith(server, []);
    const specs = [
      { ...task('t', { steps: [{ command: 'true' }] }), version: 2 },
      { ...pipeline('p', [{ task: 't' }]), version: 2 },
      { ...command('c', ['p']), version: 2 },
      { ...trigger('e', 'push', ['p']), version: 2 },
      // The data of a task under the type of a pipeline.
      { ...task('x', { steps: [{ command: 'true' }] }), type: 'pipeline' },
    ];
    const error = (await server
      .client()
      .PUT('/projects/id/{id}/resources', {
        params: { path: { id: project.id } },
        body: { specs: specs as Schemas['ResourceSpec'][] },
      })
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toMatchObject({ status: 400, code: 'invalid_request_body' });
    expect((error.data as { jsv_errors: unknown }).jsv_errors).toEqual([
      { pointer: '/specs/0/version', reason: 'must be 1' },
      { pointer: '/specs/1/version', reason: 'must be 1' },
      { pointer: '/specs/2/version', reason: 'must be 1' },
      { pointer: '/specs/3/version', reason: 'must be 1' },
      { pointer: '/specs/4/data/tasks', reason: 'is required' },
      { pointer: '/specs/4/data/steps', reason: 'is an unknown member' },
    ]);
  });
});

describe('tasks', () => {
  it('keeps the source of a step only to show it, and runs its code', async () => {
    const step = { label: 'Say', code: 'echo from code', source: 'scripts/not-there.sh' };
    const { client } = await projectWith(server, [
      task('say', { steps: [step] }),
      pipeline('main', [{ task: 'say' }]),
      command('go', ['main']),
    ]);
    const { data: resource } = await client.GET('/resources/type/{type}/name/{name}', {
      params: { path: { type: 'task', name: 'say' } },
    });
    expect(resource?.spec.type === 'task' && resource.spec.data.steps).toEqual([step]);
    const [pipelineId = ''] = (await execute(client, 'go')).pipeline_ids;
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const [say] = await tasksOf(client, pipelineId);
    expect(say?.spec.data.steps).toEqual([step]);
    expect((await stepsOf(client, say?.id ?? ''))[0]?.output).toBe('from code\n');
  });

  it('passes the arguments of a script step as $1, $2..., without shell expansion', async () => {
    const steps = [
      { code: 'printf "[%s]" "$#" "$1" "$2"', arguments: ['a b', '$HOME'] },
      { code: '#!/bin/sh\nprintf "[%s]" "$#" "$1"', arguments: ['*'] },
    ];
    const { client } = await projectWith(server, [
      task('args', { steps }),
      pipeline('main', [{ task: 'args' }]),
      command('go', ['main']),
    ]);
    const [pipelineId = ''] = (await execute(client, 'go')).pipeline_ids;
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const [args] = await tasksOf(client, pipelineId);
    const outputs = (await stepsOf(client, args?.id ?? '')).map((s) => s.output);
    expect(outputs).toEqual(['[2][a b][$HOME]', '[1][*]']);
  });
});

describe('pipelines', () => {
  it('runs one task resource under two entry names, which name its tasks, each with its label', async () => {
    const { client } = await projectWith(server, [
      task('say', { steps: [{ code: 'echo "$PIPEWRIGHT_TASK_ID"' }] }),
      pipeline('main', [
        { name: 'second', label: 'Say it again', task: 'say', dependencies: ['first'] },
        { name: 'first', label: 'Say it', task: 'say' },
      ]),
      command('go', ['main']),
    ]);
    const [pipelineId = ''] = (await execute(client, 'go')).pipeline_ids;
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const tasks = Object.fromEntries((await tasksOf(client, pipelineId)).map((t) => [t.name, t]));
    expect(Object.keys(tasks).sort()).toEqual(['first', 'second']);
    expect(tasks.first).toMatchObject({ pipeline_task: { label: 'Say it' }, spec: { name: 'say' } });
    expect(tasks.second).toMatchObject({
      pipeline_task: { label: 'Say it again' },
      spec: { name: 'say' },
      dependencies: ['first'],
    });
    expect(Date.parse(tasks.second?.start_time ?? '')).toBeGreaterThanOrEqual(
      Date.parse(tasks.first?.end_time ?? ''),
    );
  });

  it('fails an instance for good once its nb_retries retries have failed', async () => {
    const { client } = await projectWith(server, [
      task('broken', { steps: [{ code: 'echo try; exit 5' }] }),
      pipeline('main', [{ task: 'broken', nb_retries: 1 }]),
      command('go', ['main']),
    ]);
    const [pipelineId = ''] = (await execute(client, 'go')).pipeline_ids;
    expect((await finished(client, pipelineId)).status).toBe('failed');
    const [broken] = await tasksOf(client, pipelineId);
    expect(broken).toMatchObject({ status: 'failed', retry: 1 });
    const steps = await stepsOf(client, broken?.id ?? '');
    expect(steps.map((s) => [s.attempt, s.status, s.exit_code])).toEqual([
      [0, 'failed', 5],
      [1, 'failed', 5],
    ]);
  });

  it('starts every pipeline of a command at each execution, and no other', async () => {
    const { client } = await projectWith(server, [
      noop,
      ...['a', 'b', 'c'].map((name) => pipeline(name, [{ task: 'noop' }])),
      command('go', ['a', 'b']),
    ]);
    const execution = await execute(client, 'go');
    expect(execution.pipeline_ids).toHaveLength(2);
    expect(await pipelineNames(client)).toEqual(['a', 'b']);
  });
});

describe('triggers and events', () => {
  it('starts every pipeline of a trigger for each event it accepts, and no other', async () => {
    const { client, send } = await organizationWith([
      noop,
      ...['a', 'b', 'c'].map((name) => pipeline(name, [{ task: 'noop' }])),
      trigger('on-push', 'push', ['a', 'b']),
    ]);
    expect(await send('push')).toHaveLength(1);
    expect(await pipelineNames(client)).toEqual(['a', 'b']);
  });

  it('fires a trigger only for the events of its name', async () => {
    const { client, send } = await organizationWith([
      noop,
      pipeline('main', [{ task: 'noop' }]),
      trigger('on-push', 'push', ['main']),
    ]);
    expect(await send('pull')).toEqual([]);
    expect(await pipelineNames(client)).toEqual([]);
    expect(await send('push')).toEqual([expect.objectContaining({ name: 'push' })]);
    expect(await pipelineNames(client)).toEqual(['main']);
  });

  it('dates an event sent without event_time at the time of the request', async () => {
    const { send } = await organizationWith([
      noop,
      pipeline('main', [{ task: 'noop' }]),
      trigger('on-push', 'push', ['main']),
    ]);
    const before = Date.now();
    const [event] = await send('push');
    const after = Date.now();
    const time = Date.parse(event?.event_time ?? '');
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(after);
  });

  it('ticks a weekly schedule at its second', async () => {
    // Two days from now, at 30 seconds past a minute: the day, hour and minute of the schedule.
    const tick = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 2 * DAY_MS + 30_000);
    const days = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
    const weekly = {
      day: days[tick.getUTCDay()],
      hour: tick.getUTCHours(),
      minute: tick.getUTCMinutes(),
      second: 30,
    };
    const { client } = await projectWith(server, [
      noop,
      pipeline('main', [{ task: 'noop' }]),
      {
        type: 'trigger',
        version: 1,
        name: 'weekly',
        data: { connector: 'time', event: 'tick', parameters: { weekly }, pipelines: ['main'] },
      },
    ]);
    now = new Date(tick.getTime() + 1000);
    await server.ticker?.tickOnce();
    const { data } = await client.GET('/events', { params: { query: { connector: 'time' } } });
    expect(data?.elements.map((e) => e.event_time)).toEqual([tick.toISOString()]);
  });
});
