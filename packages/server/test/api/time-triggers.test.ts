import type { Schemas } from '@pipewright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finished, pipeline, projectWith, resourceId, task, trigger } from '../helpers/projects.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';

// The ticker runs on a clock of the test's own; everything else runs on the real one.
let now = new Date();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ ticker: { clock: () => now } });
});
afterAll(() => server.close());

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
    server.ticker?.tickOnce();

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
    server.ticker?.tickOnce();
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

describe('time triggers on a running ticker', () => {
  // Between passes this ticker sleeps an hour unless woken: a tick within the wait below
  // shows that the install woke it.
  let running: TestServer;
  beforeAll(async () => {
    running = await startTestServer({ ticker: { maxSleepMs: HOUR_MS } });
    running.ticker?.start();
  });
  afterAll(() => running.close());

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
