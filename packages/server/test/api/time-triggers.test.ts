import type { Schemas } from '@pipewright/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { finished, pipeline, projectWith, resourceId, task, trigger } from '../helpers/projects.js';
import { sharedTestServer } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';

// The ticker runs on a clock of the test's own; everything else runs on the real one.
let now = new Date();
const server = sharedTestServer({ ticker: { clock: () => now } });

const HOUR_MS = 3_600_000;

const timeTrigger = (name: string, parameters: Record<string, unknown>, event = 'tick') => ({
  type: 'trigger',
  version: 1,
  name,
  data: { connector: 'time', event, parameters, pipelines: ['hourly'] },
});
// The task checks that it was started by a tick: its context holds the event.
const checksItsEvent = [
  task('check', { steps: [{ code: 'grep -q \'"connector":"time"\' "$PIPEWRIGHT_CONTEXT_PATH"' }] }),
  pipeline('hourly', [{ task: 'check' }]),
];

describe('time triggers', () => {
  it('run their pipelines at each tick of their schedule', async () => {
    const { client } = await projectWith(server, [
      ...checksItsEvent,
      timeTrigger('every-hour', { periodic: 3600 }),
    ]);
    // `periodic: 3600` ticks on the hour: move the ticker's clock just past the next one.
    const tick = new Date((Math.floor(Date.now() / HOUR_MS) + 1) * HOUR_MS);
    now = new Date(tick.getTime() + 1000);
    await server.ticker?.tickOnce();

    const { data: events } = await client.GET('/events', { params: { query: { connector: 'time' } } });
    expect(events?.elements).toEqual([
      expect.objectContaining({
        trigger_id: await resourceId(client, 'trigger', 'every-hour'),
        connector: 'time',
        name: 'tick',
        event_time: tick.toISOString(),
        data: { scheduled_time: tick.toISOString() },
        original_event_id: null,
      }),
    ]);
    const { data: pipelines } = await client.GET('/pipelines', {
      params: { query: { size: 10 } },
    });
    expect(pipelines?.elements).toHaveLength(1);
    const started = pipelines?.elements[0];
    expect(started).toMatchObject({ event_id: events?.elements[0]?.id, event_time: tick.toISOString() });
    expect((await finished(client, started?.id ?? '')).status).toBe('successful');

    // Another pass at the same time makes nothing more.
    await server.ticker?.tickOnce();
    const { data: again } = await client.GET('/events', { params: { query: { connector: 'time' } } });
    expect(again?.elements).toHaveLength(1);
  });

  it('are validated at installation, with a pointer to each problem', async () => {
    const { project } = await projectWith(server, []);
    const specs = [
      ...checksItsEvent,
      trigger('on-push', 'push', ['hourly']),
      timeTrigger('nightly', { daily: { hour: 24 } }, 'push'),
    ];
    await expect(
      server.client().PUT('/projects/id/{id}/resources', {
        params: { path: { id: project.id } },
        body: { specs: specs as Schemas['ResourceSpec'][] },
      }),
    ).rejects.toMatchObject({
      status: 400,
      code: 'invalid_request_body',
      data: {
        jsv_errors: [
          { pointer: '/specs/3/data/event', reason: 'must be "tick" when connector is "time"' },
          { pointer: '/specs/3/data/parameters/daily/hour', reason: 'must be at most 23' },
        ],
      },
    });
  });
});

const DAY_MS = 24 * HOUR_MS;

/**
 * The first `count` times after `t` (ms) of a schedule ticking at `first(t)`, then every
 * `period` ms: worked out here with the calendar, apart from the server's arithmetic.
 */
const ticksAfter = (t: number, first: (t: number) => number, period: number, count: number) =>
  Array.from({ length: count }, (_, k) => new Date(first(t) + k * period).toISOString());
/** Midnight UTC of the day of `t`. */
const dayOf = (t: number) => Math.floor(t / DAY_MS) * DAY_MS;
/** The first time after `t` that is `offset` ms into a day: `offset` into the next day if passed. */
const nextInDay = (t: number, offset: number) => dayOf(t) + offset + (dayOf(t) + offset > t ? 0 : DAY_MS);

describe('getNextTicks', () => {
  // Each case: the schedule, and its first tick after `t` and period, as the calendar says.
  it.each([
    ['periodic', { periodic: 3600 }, (t: number) => (Math.floor(t / HOUR_MS) + 1) * HOUR_MS, HOUR_MS],
    [
      'hourly',
      { hourly: { minute: 15, second: 30 } },
      (t: number) => {
        const inHour = Math.floor(t / HOUR_MS) * HOUR_MS + 930_000;
        return inHour > t ? inHour : inHour + HOUR_MS;
      },
      HOUR_MS,
    ],
    ['daily', { daily: { hour: 3, minute: 30 } }, (t: number) => nextInDay(t, 3.5 * HOUR_MS), DAY_MS],
    [
      'weekly',
      { weekly: { day: 'sunday', hour: 3 } },
      (t: number) => {
        const sunday = dayOf(t) - new Date(t).getUTCDay() * DAY_MS + 3 * HOUR_MS;
        return sunday > t ? sunday : sunday + 7 * DAY_MS;
      },
      7 * DAY_MS,
    ],
  ])(
    'lists the next ticks of a %s schedule after now, the earliest first',
    async (_kind, schedule, first, period) => {
      const { client } = await projectWith(server, [...checksItsEvent, timeTrigger('scheduled', schedule)]);
      const id = await resourceId(client, 'trigger', 'scheduled');
      const before = Date.now();
      const { data } = await client.GET('/resources/id/{id}/next_ticks', { params: { path: { id } } });
      const after = Date.now();
      // A tick may pass during the request: then the list starts one tick later.
      expect([ticksAfter(before, first, period, 5), ticksAfter(after, first, period, 5)]).toContainEqual(
        data?.next_ticks,
      );
      expect(data?.resource_id).toBe(id);
      const { data: three } = await client.GET('/resources/id/{id}/next_ticks', {
        params: { path: { id }, query: { count: 3 } },
      });
      expect(three?.next_ticks).toHaveLength(3);
    },
  );

  it('lists the one tick of a oneshot to come, and none once it has passed', async () => {
    const soon = new Date(Date.now() + DAY_MS).toISOString();
    const past = new Date(Date.now() - DAY_MS).toISOString();
    const { client } = await projectWith(server, [
      ...checksItsEvent,
      timeTrigger('soon', { oneshot: soon }),
      timeTrigger('past', { oneshot: past }),
    ]);
    const ticksOf = async (name: string) => {
      const id = await resourceId(client, 'trigger', name);
      return (await client.GET('/resources/id/{id}/next_ticks', { params: { path: { id } } })).data
        ?.next_ticks;
    };
    expect(await ticksOf('soon')).toEqual([soon]);
    expect(await ticksOf('past')).toEqual([]);
  });

  it('lists the tick the ticker runs next first', async () => {
    const { client } = await projectWith(server, [
      ...checksItsEvent,
      timeTrigger('next', { periodic: 7200 }),
    ]);
    const id = await resourceId(client, 'trigger', 'next');
    const { data } = await client.GET('/resources/id/{id}/next_ticks', { params: { path: { id } } });
    const [first] = data?.next_ticks ?? [];
    now = new Date(Date.parse(first ?? '') + 1000);
    await server.ticker?.tickOnce();
    const { data: events } = await client.GET('/events', { params: { query: { connector: 'time' } } });
    expect(events?.elements.map((event) => event.event_time)).toEqual([first]);
  });

  it('lists no tick of other resources, and refuses an unknown resource or count', async () => {
    const { client } = await projectWith(server, [...checksItsEvent, trigger('on-push', 'push', ['hourly'])]);
    for (const [type, name] of [
      ['trigger', 'on-push'],
      ['task', 'check'],
      ['pipeline', 'hourly'],
    ] as const) {
      const id = await resourceId(client, type, name);
      const { data } = await client.GET('/resources/id/{id}/next_ticks', { params: { path: { id } } });
      expect(data).toEqual({ resource_id: id, next_ticks: [] });
    }
    const unknown = '2Fv9zQx0bY3kLmN8pQrStUvWxYz';
    await expect(
      client.GET('/resources/id/{id}/next_ticks', { params: { path: { id: unknown } } }),
    ).rejects.toMatchObject({ status: 404, code: 'unknown_resource', data: { id: unknown } });
    const id = await resourceId(client, 'task', 'check');
    for (const count of [0, 101]) {
      await expect(
        client.GET('/resources/id/{id}/next_ticks', { params: { path: { id }, query: { count } } }),
      ).rejects.toMatchObject({ status: 400, code: 'invalid_query_parameter' });
    }
  });
});

describe('time triggers on a running ticker', () => {
  // Between passes this ticker sleeps an hour unless woken: a tick within the wait below
  // shows that the install woke it.
  const running = sharedTestServer({ ticker: { maxSleepMs: HOUR_MS } });
  beforeAll(() => running.ticker.start());

  const firstTick = async (client: Awaited<ReturnType<typeof projectWith>>['client']) => {
    const { data } = await waitFor(
      () => client.GET('/events', { params: { query: { connector: 'time' } } }),
      ({ data }) => (data?.elements.length ?? 0) > 0,
    );
    return data?.elements[0];
  };

  it('tick for the first time on time after their install', async () => {
    const { client } = await projectWith(running, [
      ...checksItsEvent,
      timeTrigger('every-second', { periodic: 1 }),
    ]);
    expect(await firstTick(client)).toMatchObject({
      trigger_id: await resourceId(client, 'trigger', 'every-second'),
      connector: 'time',
      name: 'tick',
    });
  });

  it('tick on their new schedule as soon as it is installed', async () => {
    const daily = [...checksItsEvent, timeTrigger('changing', { daily: { hour: 0 } })];
    const { project, client } = await projectWith(running, daily);
    await running.client().PUT('/projects/id/{id}/resources', {
      params: { path: { id: project.id } },
      body: {
        specs: [...checksItsEvent, timeTrigger('changing', { periodic: 1 })] as Schemas['ResourceSpec'][],
      },
    });
    expect(await firstTick(client)).toMatchObject({ connector: 'time', name: 'tick' });
  });
});
