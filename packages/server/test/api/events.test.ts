import { type Schemas, walk } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import { command, finished, pipeline, projectWith, resourceId, task, trigger } from '../helpers/projects.js';
import { sharedTestServer, uniqueName } from '../helpers/test-server.js';

const server = sharedTestServer();

const noop = [task('noop', { steps: [{ command: 'true' }] }), pipeline('main', [{ task: 'noop' }])];

/** A project in a fresh organization with `triggers` installed; returns an org-wide client too. */
async function organizationWith(...triggers: unknown[]) {
  const apiKey = await server.newOrganization();
  const { project, client } = await projectWith(server, [...noop, ...triggers], apiKey);
  return { project, client, orgClient: server.client(apiKey), apiKey };
}

describe('createEvents', () => {
  it('stores one event per matching trigger and starts its pipelines', async () => {
    const name = uniqueName('push');
    const { project, client, orgClient } = await organizationWith(trigger('on-push', name, ['main']));
    const { data: events, response } = await orgClient.POST('/events', {
      body: { connector: 'custom', name, data: { branch: 'main' }, event_time: '2026-11-22T12:00:00+02:00' },
    });
    expect(response.status).toBe(201);
    expect(events).toEqual([
      expect.objectContaining({
        project_id: project.id,
        trigger_id: await resourceId(client, 'trigger', 'on-push'),
        connector: 'custom',
        name,
        data: { branch: 'main' },
        event_time: '2026-11-22T10:00:00.000Z',
        original_event_id: null,
      }),
    ]);
    const { data: pipelines } = await client.GET('/pipelines', { params: { query: { size: 10 } } });
    expect(pipelines?.elements).toHaveLength(1);
    expect(pipelines?.elements[0]).toMatchObject({
      event_id: events?.[0]?.id,
      trigger_id: events?.[0]?.trigger_id,
    });
    expect((await finished(client, pipelines?.elements[0]?.id ?? '')).status).toBe('successful');
  });

  it.each([
    ['is_equal_to', { path: '/branch', is_equal_to: 'main' }, { branch: 'main' }, { branch: 'dev' }],
    [
      'is_equal_to on objects',
      { path: '/who', is_equal_to: { id: 1 } },
      { who: { id: 1 } },
      { who: { id: 2 } },
    ],
    ['is_not_equal_to', { path: '/branch', is_not_equal_to: 'main' }, { branch: 'dev' }, { branch: 'main' }],
    ['is_not_equal_to a missing value', { path: '/tag', is_not_equal_to: 'x' }, {}, { tag: 'x' }],
    [
      'matches',
      { path: '/ref', matches: '^refs/tags/v\\d+' },
      { ref: 'refs/tags/v12' },
      { ref: 'refs/heads/main' },
    ],
    [
      'does_not_match',
      { path: '/ref', does_not_match: '^refs/tags/' },
      { ref: 'refs/heads/x' },
      { ref: 'refs/tags/v1' },
    ],
    [
      'a pointer into an array',
      { path: '/commits/1/id', is_equal_to: 'b' },
      { commits: [{ id: 'a' }, { id: 'b' }] },
      { commits: [{ id: 'a' }] },
    ],
  ])('filters with %s', async (_case, filter, accepted, rejected) => {
    const name = uniqueName('evt');
    const { orgClient } = await organizationWith(trigger('filtered', name, ['main'], [filter]));
    const send = async (data: Record<string, unknown>) =>
      (await orgClient.POST('/events', { body: { connector: 'custom', name, data } })).data;
    expect(await send(accepted)).toHaveLength(1);
    expect(await send(rejected)).toEqual([]);
  });

  it('requires every filter of a trigger to hold', async () => {
    const name = uniqueName('evt');
    const filters = [
      { path: '/a', is_equal_to: 1 },
      { path: '/b', is_equal_to: 2 },
    ];
    const { orgClient } = await organizationWith(trigger('both', name, ['main'], filters));
    const send = async (data: Record<string, unknown>) =>
      (await orgClient.POST('/events', { body: { connector: 'custom', name, data } })).data;
    expect(await send({ a: 1, b: 2 })).toHaveLength(1);
    expect(await send({ a: 1, b: 3 })).toEqual([]);
  });

  // A backtracking engine takes about 2^n steps for n a's here (12 s for 30 of them, the
  // server answering nobody meanwhile); the ones below would never end.
  it('matches regular expressions in linear time, and answers other organizations meanwhile', async () => {
    const name = uniqueName('evt');
    const { client, orgClient } = await organizationWith(
      trigger('nested', name, ['main'], [{ path: '/s', matches: '^(a+)+$' }]),
    );
    const send = async (s: string) =>
      (await orgClient.POST('/events', { body: { connector: 'custom', name, data: { s } } })).data;
    const other = server.client(await server.newOrganization());
    const [events, org] = await Promise.all([send(`${'a'.repeat(40)}!`), other.GET('/org')]);
    expect(events).toEqual([]);
    expect(org.data?.name).toMatch(/^org-/);
    // The longest value matched, 4,096 characters, then one past it, which never matches.
    expect(await send(`${'a'.repeat(4095)}!`)).toEqual([]);
    const { data: none } = await client.GET('/pipelines', { params: { query: { size: 10 } } });
    expect(none?.elements).toEqual([]);
    expect(await send('a'.repeat(4096))).toHaveLength(1);
    expect(await send('a'.repeat(4097))).toEqual([]);
  });

  it('refuses at installation a regular expression RE2 cannot run, with a pointer to it', async () => {
    const { project } = await projectWith(server, []);
    const filters = [
      { path: '/s', matches: '(a)\\1' },
      { path: '/s', does_not_match: 'a(?=b)' },
    ];
    await expect(
      server.client().PUT('/projects/id/{id}/resources', {
        params: { path: { id: project.id } },
        body: { specs: [...noop, trigger('t', 'e', ['main'], filters)] as Schemas['ResourceSpec'][] },
      }),
    ).rejects.toMatchObject({
      status: 400,
      code: 'invalid_request_body',
      data: {
        jsv_errors: [
          {
            pointer: '/specs/2/data/filters/0/matches',
            reason:
              'must be a regular expression in RE2 syntax (no backreferences, no lookaround): invalid escape sequence: `\\1`',
          },
          {
            pointer: '/specs/2/data/filters/1/does_not_match',
            reason:
              'must be a regular expression in RE2 syntax (no backreferences, no lookaround): invalid or unsupported Perl syntax: `(?=`',
          },
        ],
      },
    });
  });

  it('reaches every project of the organization, or the header project only', async () => {
    const name = uniqueName('deploy');
    const apiKey = await server.newOrganization();
    const first = await projectWith(server, [...noop, trigger('t', name, ['main'])], apiKey);
    const second = await projectWith(server, [...noop, trigger('t', name, ['main'])], apiKey);
    const body = { connector: 'custom' as const, name, data: {} };
    const everywhere = (await server.client(apiKey).POST('/events', { body })).data ?? [];
    expect(everywhere.map((e) => e.project_id).sort()).toEqual([first.project.id, second.project.id].sort());
    const one = (await server.client(apiKey, second.project.id).POST('/events', { body })).data ?? [];
    expect(one.map((e) => e.project_id)).toEqual([second.project.id]);
    // Another organization's triggers never hear it.
    const other = await organizationWith(trigger('t', name, ['main']));
    expect((await other.orgClient.POST('/events', { body })).data).toHaveLength(1);
    const { data } = await first.client.GET('/events', { params: { query: { name } } });
    expect(data?.elements).toHaveLength(1);
  });

  it("makes each event's pipelines from the specs installed when it comes, through changes between events", async () => {
    const name = uniqueName('build');
    const { project, client, orgClient } = await organizationWith(trigger('on-build', name, ['main']));
    const send = async () => {
      const { data } = await orgClient.POST('/events', { body: { connector: 'custom', name, data: {} } });
      const { data: made } = await client.GET('/pipelines', {
        params: { query: { event_id: data?.[0]?.id ?? '', size: 10 } },
      });
      const [made1] = made?.elements ?? [];
      if (!made1) throw new Error('no pipeline');
      const tasks = await client.GET('/tasks', { params: { query: { pipeline_id: made1.id, size: 10 } } });
      return { pipeline: made1, tasks: tasks.data?.elements ?? [] };
    };
    const install = (specs: unknown[]) =>
      client.PUT('/projects/id/{id}/resources', {
        params: { path: { id: project.id } },
        body: { specs: specs as Schemas['ResourceSpec'][] },
      });
    // The same resources twice, then each change an event's pipelines are made from.
    for (let i = 0; i < 2; i += 1) expect((await send()).tasks.map((t) => t.name)).toEqual(['noop']);
    const [noopTask] = noop;
    const other = task('other', { steps: [{ command: 'echo other' }] });
    await install([
      noopTask,
      other,
      pipeline('main', [{ task: 'other' }]),
      trigger('on-build', name, ['main']),
    ]);
    const changedPipeline = await send();
    expect(changedPipeline.tasks.map((t) => t.name)).toEqual(['other']);
    expect(changedPipeline.tasks[0]?.spec.data.steps[0]?.command).toBe('echo other');
    const changedTask = task('other', { steps: [{ command: 'echo changed' }] });
    await install([
      noopTask,
      changedTask,
      pipeline('main', [{ task: 'other' }]),
      trigger('on-build', name, ['main']),
    ]);
    expect((await send()).tasks[0]?.spec.data.steps[0]?.command).toBe('echo changed');
    await install([noopTask, pipeline('second', [{ task: 'noop' }]), trigger('on-build', name, ['second'])]);
    expect((await send()).pipeline.name).toBe('second');
  });

  it('answers an empty array when no trigger listens', async () => {
    const { data, response } = await server.client(await server.newOrganization()).POST('/events', {
      body: { connector: 'custom', name: 'nobody-listens', data: {} },
    });
    expect(response.status).toBe(201);
    expect(data).toEqual([]);
  });

  it('accepts only the custom connector', async () => {
    await expect(
      server.client().POST('/events', { body: { connector: 'time' as 'custom', name: 'tick', data: {} } }),
    ).rejects.toMatchObject({ status: 400, code: 'invalid_request_body' });
  });
});

describe('replayEvent', () => {
  it("copies a trigger's event and starts its pipelines again", async () => {
    const name = uniqueName('push');
    const { client, orgClient } = await organizationWith(trigger('on-push', name, ['main']));
    const [original] =
      (await orgClient.POST('/events', { body: { connector: 'custom', name, data: { n: 1 } } })).data ?? [];
    const { data: copy, response } = await client.POST('/events/id/{id}/replay', {
      params: { path: { id: original?.id ?? '' } },
    });
    expect(response.status).toBe(201);
    expect(copy).toMatchObject({
      connector: 'custom',
      name,
      data: { n: 1 },
      trigger_id: original?.trigger_id,
      original_event_id: original?.id,
    });
    expect(copy?.id).not.toBe(original?.id);
    const { data: pipelines } = await client.GET('/pipelines', { params: { query: { size: 10 } } });
    expect(pipelines?.elements.map((p) => p.event_id).sort()).toEqual([original?.id, copy?.id].sort());
    const { data: byPipeline } = await client.GET('/events', {
      params: { query: { pipeline_id: pipelines?.elements.find((p) => p.event_id === copy?.id)?.id ?? '' } },
    });
    expect(byPipeline?.elements.map((e) => e.id)).toEqual([copy?.id]);
    // And the other way: the pipelines of one event.
    for (const event of [original, copy]) {
      const { data: started } = await client.GET('/pipelines', {
        params: { query: { event_id: event?.id ?? '' } },
      });
      expect(started?.elements.map((p) => p.event_id)).toEqual([event?.id]);
    }
    const { data: none } = await client.GET('/pipelines', {
      params: { query: { event_id: '2Fv9zQx0bY3kLmN8pQrStUvWxYz' } },
    });
    expect(none?.elements).toEqual([]);
  });

  it("replays a command's event with the same parameters", async () => {
    const { client } = await projectWith(server, [
      task('echo', { steps: [{ code: 'echo "$WHO"' }] }),
      pipeline('main', [{ task: 'echo' }]),
      command('greet', ['main'], [{ name: 'who', type: 'string', environment: 'WHO' }]),
    ]);
    const commandId = await resourceId(client, 'command', 'greet');
    const { data: execution } = await client.POST('/commands/id/{id}/execute', {
      params: { path: { id: commandId } },
      body: { parameters: { who: 'ada' } },
    });
    const { data: copy } = await client.POST('/events/id/{id}/replay', {
      params: { path: { id: execution?.event_id ?? '' } },
    });
    expect(copy).toMatchObject({
      connector: 'command',
      name: 'execution',
      command_id: commandId,
      data: { parameters: { who: 'ada' } },
    });
    const { data: pipelines } = await client.GET('/pipelines', { params: { query: { size: 10 } } });
    const replayed = pipelines?.elements.find((p) => p.event_id === copy?.id);
    expect((await finished(client, replayed?.id ?? '')).status).toBe('successful');
    const { data: tasks } = await client.GET('/tasks', {
      params: { query: { pipeline_id: replayed?.id ?? '' } },
    });
    const { data: steps } = await client.GET('/tasks/id/{id}/steps', {
      params: { path: { id: tasks?.elements[0]?.id ?? '' } },
    });
    expect(steps?.[0]?.output).toBe('ada\n');
  });

  it("answers unknown_event for another project's event", async () => {
    const name = uniqueName('push');
    const { orgClient, apiKey } = await organizationWith(trigger('on-push', name, ['main']));
    const [event] =
      (await orgClient.POST('/events', { body: { connector: 'custom', name, data: {} } })).data ?? [];
    const elsewhere = await projectWith(server, noop, apiKey);
    await expect(
      elsewhere.client.POST('/events/id/{id}/replay', { params: { path: { id: event?.id ?? '' } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_event' });
    await expect(
      elsewhere.client.GET('/events/id/{id}', { params: { path: { id: event?.id ?? '' } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_event' });
  });
});

describe('listEvents', () => {
  it('filters by connector and name, and sorts by event_time', async () => {
    const name = uniqueName('evt');
    const { client, orgClient } = await organizationWith(trigger('t', name, ['main']));
    for (const hour of ['03', '01', '02']) {
      await orgClient.POST('/events', {
        body: { connector: 'custom', name, data: {}, event_time: `2026-01-01T${hour}:00:00Z` },
      });
    }
    const times = [];
    for await (const event of walk(client, '/events', {
      connector: 'custom',
      name,
      sort: 'event_time',
      size: 2,
    })) {
      times.push(event.event_time);
    }
    expect(times).toEqual([
      '2026-01-01T01:00:00.000Z',
      '2026-01-01T02:00:00.000Z',
      '2026-01-01T03:00:00.000Z',
    ]);
    const { data } = await client.GET('/events', { params: { query: { connector: 'command' } } });
    expect(data?.elements).toEqual([]);
  });
});
