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
} from '../helpers/projects.js';
import { sharedTestServer } from '../helpers/test-server.js';

const server = sharedTestServer();

const deploySet = [
  task('greet', {
    parameters: [{ name: 'punctuation', type: 'string', default: '!', environment: 'PUNCTUATION' }],
    steps: [{ label: 'Greet', code: 'echo "hello $GREETING$PUNCTUATION"' }],
  }),
  pipeline('main', [{ task: 'greet' }]),
  command(
    'run',
    ['main'],
    [
      { name: 'greeting', type: 'string', environment: 'GREETING' },
      { name: 'times', type: 'number', default: 1 },
      { name: 'mode', type: 'string', values: ['fast', 'slow'], default: 'fast' },
    ],
  ),
];

describe('executeCommand', () => {
  it('stores the execution, fills defaults, and runs its pipelines with the parameters', async () => {
    const { project, client } = await projectWith(server, deploySet);
    const commandId = await resourceId(client, 'command', 'run');
    const { data: execution, response } = await client.POST('/commands/id/{id}/execute', {
      params: { path: { id: commandId } },
      body: { parameters: { greeting: 'world' } },
    });
    expect(response.status).toBe(201);
    expect(execution).toMatchObject({
      project_id: project.id,
      command_id: commandId,
      parameters: { greeting: 'world', times: 1, mode: 'fast' },
      pipeline_ids: [expect.any(String)],
    });
    const pipelineId = execution?.pipeline_ids[0] ?? '';
    expect(await finished(client, pipelineId)).toMatchObject({ status: 'successful', command_id: commandId });
    const [only] = await tasksOf(client, pipelineId);
    expect(only).toMatchObject({ name: 'greet', status: 'successful', instance_id: 1, retry: 0 });
    const steps = await stepsOf(client, only?.id ?? '');
    expect(steps).toEqual([
      expect.objectContaining({
        attempt: 0,
        index: 0,
        label: 'Greet',
        status: 'successful',
        exit_code: 0,
        output: 'hello world!\n',
      }),
    ]);
  });
});

describe('executeCommand errors', () => {
  it.each([
    ['an unknown parameter', { greeting: 'x', colour: 'red' }, '/parameters/colour', /no parameter "colour"/],
    ['a value of the wrong type', { greeting: 'x', times: 'twice' }, '/parameters/times', /must be a number/],
    ['a value not among values', { greeting: 'x', mode: 'medium' }, '/parameters/mode', /one of the values/],
    ['a missing required parameter', {}, '/parameters/greeting', /is required/],
  ])(
    'answers invalid_request_body with a pointer for %s, and stores nothing',
    async (_case, parameters, pointer, reason) => {
      const { client } = await projectWith(server, deploySet);
      const commandId = await resourceId(client, 'command', 'run');
      const error = await client
        .POST('/commands/id/{id}/execute', { params: { path: { id: commandId } }, body: { parameters } })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400, code: 'invalid_request_body' });
      const problems = (error as { data: { jsv_errors: { pointer: string; reason: string }[] } }).data
        .jsv_errors;
      expect(problems).toContainEqual({ pointer, reason: expect.stringMatching(reason) });
      expect((await client.GET('/command_executions')).data?.elements).toEqual([]);
      expect((await client.GET('/pipelines')).data?.elements).toEqual([]);
      expect((await client.GET('/events')).data?.elements).toEqual([]);
    },
  );

  it('answers unknown_command for a resource that is not a command, or of another project', async () => {
    const { client } = await projectWith(server, deploySet);
    const pipelineId = await resourceId(client, 'pipeline', 'main');
    const execute = (c: typeof client, id: string) =>
      c.POST('/commands/id/{id}/execute', {
        params: { path: { id } },
        body: { parameters: { greeting: 'x' } },
      });
    await expect(execute(client, pipelineId)).rejects.toMatchObject({ status: 404, code: 'unknown_command' });
    const other = await projectWith(server, deploySet);
    await expect(execute(other.client, await resourceId(client, 'command', 'run'))).rejects.toMatchObject({
      status: 404,
      code: 'unknown_command',
    });
  });
});

describe('listCommandExecutions', () => {
  it('lists the executions of the project, filtered by command, and reads one', async () => {
    const { client } = await projectWith(server, [
      ...deploySet,
      command('other', ['main'], [{ name: 'greeting', type: 'string' }]),
    ]);
    const run = await resourceId(client, 'command', 'run');
    const other = await resourceId(client, 'command', 'other');
    const ids: string[] = [];
    for (const id of [run, other, run]) {
      const { data } = await client.POST('/commands/id/{id}/execute', {
        params: { path: { id } },
        body: { parameters: { greeting: 'x' } },
      });
      ids.push(data?.id ?? '');
    }
    const { data: all } = await client.GET('/command_executions', {
      params: { query: { sort: 'execution_time' } },
    });
    expect(all?.elements.map((e) => e.id).sort()).toEqual([...ids].sort());
    const times = all?.elements.map((e) => e.execution_time) ?? [];
    expect(times).toEqual([...times].sort());
    const { data: runs } = await client.GET('/command_executions', { params: { query: { command: run } } });
    expect(runs?.elements.map((e) => e.id).sort()).toEqual([ids[0], ids[2]].sort());
    const { data: one } = await client.GET('/command_executions/id/{id}', {
      params: { path: { id: ids[1] ?? '' } },
    });
    expect(one).toMatchObject({ id: ids[1], command_id: other, executor_id: expect.any(String) });
    const stranger = await projectWith(server, deploySet);
    await expect(
      stranger.client.GET('/command_executions/id/{id}', { params: { path: { id: ids[1] ?? '' } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_command_execution' });
  });
});
