import { afterAll, describe, expect } from 'vitest';
import { cleanUpHomes, connectionEnv, runCli } from './helpers/cli.js';
import { it, projectWith } from './helpers/server.js';

afterAll(cleanUpHomes);

describe('mistakes a newcomer makes', () => {
  it.for<[string[], string]>([
    [['pipeline', 'list'], 'unknown command "pipeline" (did you mean "pipelines"?)'],
    [['evnets', 'list'], 'unknown command "evnets" (did you mean "events"?)'],
    [['pipelines', 'lst'], 'unknown subcommand "pipelines lst" (did you mean "list"?)'],
    [['projects', 'craete', 'x'], 'unknown subcommand "projects craete" (did you mean "create"?)'],
    [['frobnicate'], 'unknown command "frobnicate"\n'],
    [['tasks', 'x'], 'unknown subcommand "tasks x"\n'],
  ])('%j: exits 2 saying %j', async ([args, message], { server }) => {
    const result = await runCli(args, { env: connectionEnv(server) });

    expect(result.code).toBe(2);
    expect(result.stderr.startsWith(`pipewright: ${message}`)).toBe(true);
    expect(result.stderr).toContain('Usage: pipewright');
  });

  it.for<[string[], string]>([
    [['pipelines', 'show', '123'], 'not a pipeline id: 123'],
    [['tasks', 'show', 'abc'], 'not a task id: abc'],
    [['events', 'show', '42'], 'not an event id: 42'],
  ])('%j says %j', async ([args, message], { server }) => {
    const { project } = await projectWith(server);

    const result = await runCli(args, { env: connectionEnv(server, project.id) });

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`pipewright: ${message} (invalid_route_variable)\n`);
  });
});

describe('pipewright events send', () => {
  const specs = (event: string) => [
    { type: 'task', version: 1, name: 'hello', data: { steps: [{ code: 'echo hello' }] } },
    { type: 'pipeline', version: 1, name: 'greet', data: { tasks: [{ task: 'hello' }] } },
    { type: 'pipeline', version: 1, name: 'wave', data: { tasks: [{ task: 'hello' }] } },
    {
      type: 'trigger',
      version: 1,
      name: 'on-event',
      data: { connector: 'custom', event, pipelines: ['greet', 'wave'] },
    },
  ];

  it('says which pipelines it started, in every project that took the event', async ({ server }) => {
    const event = `arrival-${process.pid}-${Date.now()}`;
    const first = await projectWith(server, specs(event));
    const second = await projectWith(server, specs(event));
    // A pipeline started before the event is not one of its own.
    await runCli(['events', 'send', event, '{}'], { env: connectionEnv(server, first.project.id) });

    const result = await runCli(['events', 'send', event, '{"n": 1}'], { env: connectionEnv(server) });

    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`Sent event ${event}: 2 triggers accepted it, 4 pipelines started.`);
    expect(lines[1]).toMatch(/^PIPELINE +NAME +EVENT +PROJECT$/);
    const rows = lines.slice(2).map((line) => line.split(/ +/));
    const expected = [];
    for (const { project, client } of [first, second]) {
      const { data: events } = await client.GET('/events', { params: { query: { name: event } } });
      const sent = events?.elements.find((stored) => (stored.data as { n?: number }).n === 1);
      const { data: pipelines } = await client.GET('/pipelines', {
        params: { query: { sort: 'creation_time' } },
      });
      for (const pipeline of pipelines?.elements.filter((p) => p.event_id === sent?.id) ?? [])
        expected.push([pipeline.id, pipeline.name, sent?.id, project.id]);
    }
    expect(expected).toHaveLength(4);
    expect(rows.sort()).toEqual(expected.sort());
    expect(result.stderr).toBe('Follow one with `pipewright pipelines watch ID`.\n');
  });
});
