import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Page, PageRequest } from '../../../src/domain/cursor.js';
import { silentLogger } from '../../../src/logger.js';
import { createServices } from '../../../src/services/index.js';
import { createTicker, type TickerOptions } from '../../../src/sources/time-ticker.js';
import { openDatabase } from '../../../src/store/db.js';
import { createStore, type Store } from '../../../src/store/index.js';
import { waitFor } from '../../helpers/wait.js';

const noop = [
  { type: 'task', version: 1, name: 'noop', data: { steps: [{ command: 'true' }] } },
  { type: 'pipeline', version: 1, name: 'main', data: { tasks: [{ task: 'noop' }] } },
];
const timeTrigger = (parameters: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'trigger',
  version: 1,
  name: 'clock',
  data: { connector: 'time', event: 'tick', parameters, pipelines: ['main'], ...extra },
});
const customTrigger = {
  type: 'trigger',
  version: 1,
  name: 'clock',
  data: { connector: 'custom', event: 'tick', pipelines: ['main'] },
};

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/**
 * A database file with an organization, a project and a pipeline, and a fake clock shared
 * by the services (installs) and every ticker made by `ticker`, which may open stores of
 * its own on the same file, as other server processes would.
 */
async function world(start: string, clock?: () => Date) {
  const dir = mkdtempSync(join(tmpdir(), 'pipewright-ticks-'));
  const file = join(dir, 'pipewright.db');
  let now = new Date(start);
  const time = clock ?? (() => now);
  const stores: Store[] = [];
  const open = () => {
    const store = createStore(openDatabase(file));
    stores.push(store);
    return store;
  };
  cleanups.push(() => {
    for (const store of stores) store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const store = open();
  let wakeUps = 0;
  const work = {
    wakeUp: () => {
      wakeUps += 1;
    },
    stopTasks() {},
  };
  const services = createServices(store, work, { clock: time });
  const adminKey = await services.provisioning.bootstrap();
  if (!adminKey) throw new Error('a fresh database must bootstrap');
  const principal = await services.auth.authenticate(adminKey);
  const project = await services.projects.create(principal, 'schedules');
  /** Every page of a list, in its order. */
  const all = async <T>(list: (request: PageRequest) => Promise<Page<T>>) => {
    const elements: T[] = [];
    let after: string | undefined;
    do {
      const page = await list({ size: 100, sort: 'id', order: 'asc', after });
      elements.push(...page.elements);
      after = page.next?.after;
    } while (after);
    return elements;
  };

  return {
    file,
    store,
    project,
    get wakeUps() {
      return wakeUps;
    },
    /** Sets the fake clock. */
    at(iso: string) {
      now = new Date(iso);
    },
    /** Installs the pipeline and `triggers` at the clock's time. */
    install(...triggers: unknown[]) {
      return services.resources.install(principal, project.id, [...noop, ...triggers], { dryRun: false });
    },
    async triggerId(): Promise<string> {
      const trigger = await store.resources.getByTypeAndName(project.id, 'trigger', 'clock');
      if (!trigger) throw new Error('no trigger');
      return trigger.id;
    },
    /** A ticker on a store of its own, as another server's, unless `store` is given. */
    ticker(options: TickerOptions & { store?: Store } = {}) {
      return createTicker(options.store ?? open(), work, silentLogger, time, options);
    },
    /** The tick events stored. */
    events: () => all((request) => store.events.list(project.id, { connector: 'time' }, request)),
    /** Their scheduled times, oldest first. */
    async ticks(): Promise<string[]> {
      return (await this.events()).map((event) => event.event_time).sort();
    },
    pipelines: () => all((request) => store.pipelines.list(project.id, {}, request)),
    /** Opens the database file directly: for what the API cannot do yet (disabling). */
    sql: (statement: string, ...parameters: unknown[]) => {
      const db = openDatabase(file);
      try {
        db.prepare(statement).run(...parameters);
      } finally {
        db.close();
      }
    },
  };
}

type World = Awaited<ReturnType<typeof world>>;

/** Sets the clock to each time in turn and runs a pass of `ticker` there. */
async function passes(w: World, ticker: { tickOnce(): Promise<unknown> }, times: string[]) {
  for (const time of times) {
    w.at(time);
    await ticker.tickOnce();
  }
}

describe('ticker', () => {
  it.each<[string, Record<string, unknown>, string, string[], string[]]>([
    [
      'a oneshot',
      { oneshot: '2026-03-02T10:00:00+01:00' },
      '2026-03-02T08:00:00Z',
      ['2026-03-02T08:59:59Z', '2026-03-02T09:00:00Z', '2026-03-02T09:00:30Z', '2026-03-03T09:00:00Z'],
      ['2026-03-02T09:00:00.000Z'],
    ],
    [
      'a periodic schedule',
      { periodic: 60 },
      '2026-03-02T09:59:10Z',
      ['2026-03-02T09:59:30Z', '2026-03-02T10:00:00Z', '2026-03-02T10:00:59Z', '2026-03-02T10:01:01Z'],
      ['2026-03-02T10:00:00.000Z', '2026-03-02T10:01:00.000Z'],
    ],
    [
      'an hourly schedule',
      { hourly: { minute: 30 } },
      '2026-03-02T10:00:00Z',
      ['2026-03-02T10:29:59Z', '2026-03-02T10:30:00Z', '2026-03-02T11:00:00Z', '2026-03-02T11:30:10Z'],
      ['2026-03-02T10:30:00.000Z', '2026-03-02T11:30:00.000Z'],
    ],
    [
      'a daily schedule over the end of a month',
      { daily: { hour: 23, minute: 59, second: 59 } },
      '2026-03-31T12:00:00Z',
      ['2026-03-31T23:59:59Z', '2026-04-01T00:00:00Z', '2026-04-01T23:59:59.500Z'],
      ['2026-03-31T23:59:59.000Z', '2026-04-01T23:59:59.000Z'],
    ],
    [
      'a weekly schedule across weeks',
      { weekly: { day: 'friday', hour: 17 } },
      '2026-03-02T00:00:00Z',
      ['2026-03-06T16:59:59Z', '2026-03-06T17:00:00Z', '2026-03-09T00:00:00Z', '2026-03-13T17:00:01Z'],
      ['2026-03-06T17:00:00.000Z', '2026-03-13T17:00:00.000Z'],
    ],
  ])('ticks %s on time, once per tick', async (_case, parameters, installedAt, times, expected) => {
    const w = await world(installedAt);
    await w.install(timeTrigger(parameters));
    await passes(w, w.ticker(), times);
    expect(await w.ticks()).toEqual(expected);
  });

  it('stores each tick as an event of its trigger that instantiates its pipelines, then wakes the scheduler', async () => {
    const w = await world('2026-03-02T09:59:00Z');
    await w.install(timeTrigger({ hourly: {} }));
    const ticker = w.ticker();
    expect(await ticker.tickOnce()).toEqual({
      events: [],
      nextTickTime: new Date('2026-03-02T10:00:00Z'),
      failures: 0,
    });
    expect(w.wakeUps).toBe(0);
    w.at('2026-03-02T10:00:00.250Z');
    const pass = await ticker.tickOnce();
    const triggerId = await w.triggerId();
    const expected = {
      id: expect.any(String),
      org_id: w.project.org_id,
      project_id: w.project.id,
      trigger_id: triggerId,
      creation_time: '2026-03-02T10:00:00.250Z',
      event_time: '2026-03-02T10:00:00.000Z',
      connector: 'time',
      name: 'tick',
      data: { scheduled_time: '2026-03-02T10:00:00.000Z' },
      original_event_id: null,
    };
    expect(pass).toEqual({ events: [expected], nextTickTime: new Date('2026-03-02T11:00:00Z'), failures: 0 });
    expect(await w.events()).toEqual([expected]);
    expect(await w.pipelines()).toEqual([
      expect.objectContaining({
        name: 'main',
        trigger_id: triggerId,
        event_id: pass.events[0]?.id,
        event_time: '2026-03-02T10:00:00.000Z',
        status: 'created',
      }),
    ]);
    // The scheduler is woken once the pipelines' tasks are all written, after the pass.
    const wakeUps = await waitFor(
      async () => w.wakeUps,
      (count) => count > 0,
    );
    expect(wakeUps).toBe(1);
  });

  it('applies the trigger filters to the tick data', async () => {
    const w = await world('2026-03-02T08:30:00Z');
    await w.install(timeTrigger({ hourly: {} }, { filters: [{ path: '/scheduled_time', matches: 'T10:' }] }));
    const ticker = w.ticker();
    await passes(w, ticker, ['2026-03-02T09:00:00Z', '2026-03-02T10:00:00Z', '2026-03-02T11:00:00Z']);
    expect(await w.ticks()).toEqual(['2026-03-02T10:00:00.000Z']);
    expect(await w.pipelines()).toHaveLength(1);
  });

  it('ticks a schedule installed between two passes from its installation', async () => {
    const w = await world('2026-03-02T10:00:30Z');
    const ticker = w.ticker();
    await ticker.tickOnce();
    await w.install(timeTrigger({ periodic: 60 }));
    // The ticker learns of the trigger after its first tick: it is still on time.
    await passes(w, ticker, ['2026-03-02T10:01:05Z']);
    expect(await w.ticks()).toEqual(['2026-03-02T10:01:00.000Z']);
  });

  // The server ran the tick of 08:00, then was down until 11:00:30: the ticks of 09:00 and
  // 10:00 are missed, the one of 11:00 is on time (30 s late).
  it.each<[string, string | undefined, string[]]>([
    ['skip', 'skip', ['2026-03-02T11:00:00.000Z']],
    ['run_once (the default)', undefined, ['2026-03-02T10:00:00.000Z', '2026-03-02T11:00:00.000Z']],
    [
      'run_all',
      'run_all',
      ['2026-03-02T09:00:00.000Z', '2026-03-02T10:00:00.000Z', '2026-03-02T11:00:00.000Z'],
    ],
  ])('handles ticks missed while stopped with %s', async (_case, missed, afterRestart) => {
    const w = await world('2026-03-02T07:30:00Z');
    await w.install(timeTrigger({ hourly: {}, ...(missed ? { missed } : {}) }));
    const before = w.ticker();
    await passes(w, before, ['2026-03-02T07:30:00Z', '2026-03-02T08:00:00Z']);
    before.stop();
    const after = w.ticker();
    await passes(w, after, ['2026-03-02T11:00:30Z', '2026-03-02T11:00:40Z', '2026-03-02T12:00:00Z']);
    expect(await w.ticks()).toEqual([
      '2026-03-02T08:00:00.000Z',
      ...afterRestart,
      '2026-03-02T12:00:00.000Z',
    ]);
    expect(await w.pipelines()).toHaveLength((await w.ticks()).length);
  });

  it('runs at most the latest 100 missed ticks per trigger with run_all', async () => {
    const w = await world('2026-03-01T00:00:00Z');
    await w.install(timeTrigger({ periodic: 60, missed: 'run_all' }));
    // A day without a server: 1440 missed ticks, then the one of 00:00 is on time.
    const ticker = w.ticker();
    await passes(w, ticker, ['2026-03-02T00:00:30Z', '2026-03-02T00:00:40Z']);
    const ticks = await w.ticks();
    expect(ticks).toHaveLength(101);
    expect(ticks[0]).toBe('2026-03-01T22:20:00.000Z');
    expect(ticks.at(-1)).toBe('2026-03-02T00:00:00.000Z');
    expect(new Set(ticks).size).toBe(101);
  });

  it('makes each tick once with two tickers on one database file', async () => {
    const w = await world('2026-03-02T09:59:45Z');
    await w.install(timeTrigger({ periodic: 30 }));
    const [a, b] = [w.ticker(), w.ticker()];
    const times = [
      '2026-03-02T10:00:00Z',
      '2026-03-02T10:00:10Z',
      '2026-03-02T10:00:30Z',
      '2026-03-02T10:01:00Z',
    ];
    for (const [index, time] of times.entries()) {
      w.at(time);
      // Either one may come first.
      const order = index % 2 === 0 ? [a, b] : [b, a];
      const made: number[] = [];
      for (const ticker of order) made.push((await ticker.tickOnce()).events.length);
      expect(made.reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(1);
    }
    expect(await w.ticks()).toEqual([
      '2026-03-02T10:00:00.000Z',
      '2026-03-02T10:00:30.000Z',
      '2026-03-02T10:01:00.000Z',
    ]);
    expect(await w.pipelines()).toHaveLength(3);
  });

  it('makes a tick once when another server claims it between the read and the claim', async () => {
    const w = await world('2026-03-02T09:59:45Z');
    await w.install(timeTrigger({ periodic: 30 }));
    const other = w.ticker();
    const store = createStore(openDatabase(w.file));
    cleanups.push(() => store.close());
    // This server reads the trigger as due, then the other one claims the tick.
    const racing: Store = {
      ...store,
      triggerSchedules: {
        ...store.triggerSchedules,
        list: async () => {
          const listed = await store.triggerSchedules.list();
          expect((await other.tickOnce()).events).toHaveLength(1);
          return listed;
        },
      },
    };
    w.at('2026-03-02T10:00:00Z');
    expect(await w.ticker({ store: racing }).tickOnce()).toMatchObject({ events: [], failures: 0 });
    expect(await w.ticks()).toEqual(['2026-03-02T10:00:00.000Z']);
    expect(await w.pipelines()).toHaveLength(1);
  });

  it('leaves nothing of a tick whose claim broke off, and makes it once afterwards', async () => {
    const w = await world('2026-03-02T09:59:00Z');
    await w.install(timeTrigger({ hourly: {} }));
    const store = createStore(openDatabase(w.file));
    cleanups.push(() => store.close());
    // A server that dies while it stores the tick's tasks: its transaction never commits.
    const dying: Store = {
      ...store,
      transaction: (fn) =>
        store.transaction((tx) =>
          fn({
            ...tx,
            tasks: {
              ...tx.tasks,
              insert: async () => {
                throw new Error('killed');
              },
            },
          }),
        ),
    };
    w.at('2026-03-02T10:00:00Z');
    expect(await w.ticker({ store: dying }).tickOnce()).toMatchObject({ events: [], failures: 1 });
    expect(await w.ticks()).toEqual([]);
    expect(await w.pipelines()).toEqual([]);
    w.at('2026-03-02T10:00:20Z');
    expect((await w.ticker().tickOnce()).events).toHaveLength(1);
    w.at('2026-03-02T10:00:30Z');
    expect((await w.ticker().tickOnce()).events).toHaveLength(0);
    expect(await w.ticks()).toEqual(['2026-03-02T10:00:00.000Z']);
  });

  it('reschedules a trigger whose schedule changed, from the installation of the change', async () => {
    const w = await world('2026-03-02T00:00:00Z');
    await w.install(timeTrigger({ daily: { hour: 3 } }));
    const ticker = w.ticker();
    await passes(w, ticker, ['2026-03-02T00:00:10Z']);
    w.at('2026-03-02T01:00:00Z');
    await w.install(timeTrigger({ daily: { hour: 2 } }));
    await passes(w, ticker, ['2026-03-02T02:00:00Z', '2026-03-02T03:00:00Z', '2026-03-03T02:00:00Z']);
    expect(await w.ticks()).toEqual(['2026-03-02T02:00:00.000Z', '2026-03-03T02:00:00.000Z']);
  });

  it('keeps the schedule going when something else of the trigger changes', async () => {
    const w = await world('2026-03-02T09:30:00Z');
    await w.install(timeTrigger({ hourly: {} }));
    const ticker = w.ticker();
    await passes(w, ticker, ['2026-03-02T10:00:00Z']);
    // Written differently (same ticks), with another policy: no tick again, none lost.
    w.at('2026-03-02T10:00:05Z');
    await w.install(timeTrigger({ hourly: { minute: 0, second: 0 }, missed: 'run_all' }));
    await passes(w, ticker, ['2026-03-02T10:00:10Z', '2026-03-02T11:00:00Z']);
    expect(await w.ticks()).toEqual(['2026-03-02T10:00:00.000Z', '2026-03-02T11:00:00.000Z']);
  });

  it('stops ticking a deleted trigger; one installed again starts from its installation', async () => {
    const w = await world('2026-03-02T09:30:00Z');
    await w.install(timeTrigger({ hourly: {}, missed: 'run_all' }));
    const ticker = w.ticker();
    await passes(w, ticker, ['2026-03-02T10:00:00Z']);
    w.at('2026-03-02T10:30:00Z');
    await w.install();
    await passes(w, ticker, ['2026-03-02T11:00:00Z', '2026-03-02T12:00:00Z']);
    w.at('2026-03-02T12:30:00Z');
    await w.install(timeTrigger({ hourly: {}, missed: 'run_all' }));
    await passes(w, ticker, ['2026-03-02T12:30:10Z', '2026-03-02T13:00:00Z']);
    expect(await w.ticks()).toEqual(['2026-03-02T10:00:00.000Z', '2026-03-02T13:00:00.000Z']);
  });

  it('plans anew a trigger that was of another connector for a while', async () => {
    const w = await world('2026-03-02T09:30:00Z');
    await w.install(timeTrigger({ hourly: {}, missed: 'run_all' }));
    const ticker = w.ticker();
    await passes(w, ticker, ['2026-03-02T10:00:00Z']);
    w.at('2026-03-02T10:10:00Z');
    await w.install(customTrigger);
    await passes(w, ticker, ['2026-03-02T11:00:00Z']);
    w.at('2026-03-02T12:30:00Z');
    await w.install(timeTrigger({ hourly: {}, missed: 'run_all' }));
    await passes(w, ticker, ['2026-03-02T12:30:10Z', '2026-03-02T13:00:00Z']);
    expect(await w.ticks()).toEqual(['2026-03-02T10:00:00.000Z', '2026-03-02T13:00:00.000Z']);
  });

  it.each([
    ['a disabled trigger', 'UPDATE resources SET disabled = ? WHERE type = ?', 'trigger'],
    [
      'the triggers of a disabled organization',
      'UPDATE organizations SET disabled = ? WHERE name = ?',
      'default',
    ],
  ])('does not tick %s, nor catches up once enabled', async (_case, statement, target) => {
    const w = await world('2026-03-02T09:30:00Z');
    await w.install(timeTrigger({ hourly: {}, missed: 'run_all' }));
    const ticker = w.ticker();
    await passes(w, ticker, ['2026-03-02T10:00:00Z']);
    w.sql(statement, 1, target);
    await passes(w, ticker, ['2026-03-02T11:00:00Z', '2026-03-02T12:00:00Z']);
    w.sql(statement, 0, target);
    await passes(w, ticker, ['2026-03-02T12:30:00Z', '2026-03-02T13:00:00Z']);
    expect(await w.ticks()).toEqual(['2026-03-02T10:00:00.000Z', '2026-03-02T13:00:00.000Z']);
  });

  it('runs in a loop on the real clock between start and stop', async () => {
    const w = await world('2026-03-02T00:00:00Z', () => new Date());
    await w.install(timeTrigger({ periodic: 1 }));
    const ticker = w.ticker({ store: w.store });
    ticker.start();
    try {
      // Within a few seconds at most: each pass sleeps until the next tick.
      await waitFor(
        async () => (await w.ticks()).length,
        (count) => count >= 2,
      );
    } finally {
      ticker.stop();
    }
    const count = (await w.ticks()).length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await w.ticks()).toHaveLength(count);
  });
});
