import type { Schemas } from '@pipewright/types';
import { describe, expect, it } from 'vitest';
import { nextTick, planTicks, scheduleKey } from '../../../../src/domain/events/schedules.js';

type TimeSchedule = Schemas['TimeSchedule'];

const at = (iso: string) => new Date(iso);
const iso = (date: Date | undefined) => date?.toISOString();

describe('nextTick', () => {
  it.each<[string, TimeSchedule, string, string | undefined]>([
    [
      'a oneshot before its time',
      { oneshot: '2026-03-01T12:00:00+02:00' },
      '2026-03-01T09:00:00Z',
      '2026-03-01T10:00:00.000Z',
    ],
    [
      'a oneshot at its time (strictly after)',
      { oneshot: '2026-03-01T10:00:00Z' },
      '2026-03-01T10:00:00Z',
      undefined,
    ],
    ['a oneshot past its time', { oneshot: '2026-03-01T10:00:00Z' }, '2026-03-02T00:00:00Z', undefined],
    ['periodic 1 s', { periodic: 1 }, '2026-03-01T10:00:00.400Z', '2026-03-01T10:00:01.000Z'],
    ['periodic 300 s on a multiple', { periodic: 300 }, '2026-03-01T10:05:00Z', '2026-03-01T10:10:00.000Z'],
    ['periodic 300 s between', { periodic: 300 }, '2026-03-01T10:07:13Z', '2026-03-01T10:10:00.000Z'],
    [
      'periodic 7 s (not dividing a minute)',
      { periodic: 7 },
      '1970-01-01T00:00:13Z',
      '1970-01-01T00:00:14.000Z',
    ],
    [
      'periodic 86400 s at midnight UTC',
      { periodic: 86400 },
      '2026-03-01T10:00:00Z',
      '2026-03-02T00:00:00.000Z',
    ],
    [
      'hourly later this hour',
      { hourly: { minute: 15, second: 30 } },
      '2026-03-01T10:15:29Z',
      '2026-03-01T10:15:30.000Z',
    ],
    [
      'hourly next hour',
      { hourly: { minute: 15, second: 30 } },
      '2026-03-01T10:15:30Z',
      '2026-03-01T11:15:30.000Z',
    ],
    ['hourly with omitted members', { hourly: {} }, '2026-03-01T10:00:00.001Z', '2026-03-01T11:00:00.000Z'],
    ['hourly across midnight', { hourly: { minute: 5 } }, '2026-03-01T23:30:00Z', '2026-03-02T00:05:00.000Z'],
    [
      'daily later today',
      { daily: { hour: 3, minute: 30 } },
      '2026-03-01T01:00:00Z',
      '2026-03-01T03:30:00.000Z',
    ],
    [
      'daily tomorrow',
      { daily: { hour: 3, minute: 30 } },
      '2026-03-01T03:30:00Z',
      '2026-03-02T03:30:00.000Z',
    ],
    [
      'daily at the end of a 30-day month',
      { daily: { hour: 23, minute: 59, second: 59 } },
      '2026-04-30T23:59:59Z',
      '2026-05-01T23:59:59.000Z',
    ],
    [
      'daily at the end of a 31-day month',
      { daily: { hour: 1 } },
      '2026-01-31T02:00:00Z',
      '2026-02-01T01:00:00.000Z',
    ],
    ['daily onto a leap day', { daily: { hour: 6 } }, '2028-02-28T07:00:00Z', '2028-02-29T06:00:00.000Z'],
    ['daily over a leap day', { daily: { hour: 6 } }, '2028-02-29T07:00:00Z', '2028-03-01T06:00:00.000Z'],
    ['daily without a leap day', { daily: { hour: 6 } }, '2026-02-28T07:00:00Z', '2026-03-01T06:00:00.000Z'],
    ['daily at the end of the year', { daily: {} }, '2026-12-31T00:00:00Z', '2027-01-01T00:00:00.000Z'],
    [
      'daily on a DST change elsewhere (UTC has none)',
      { daily: { hour: 2 } },
      '2026-03-29T00:00:00Z',
      '2026-03-29T02:00:00.000Z',
    ],
    [
      'weekly later this week',
      { weekly: { day: 'friday', hour: 17 } },
      '2026-03-02T00:00:00Z',
      '2026-03-06T17:00:00.000Z',
    ],
    [
      'weekly later on its own day',
      { weekly: { day: 'monday', hour: 8 } },
      '2026-03-02T07:59:59Z',
      '2026-03-02T08:00:00.000Z',
    ],
    [
      'weekly next week, same day',
      { weekly: { day: 'monday', hour: 8 } },
      '2026-03-02T08:00:00Z',
      '2026-03-09T08:00:00.000Z',
    ],
    [
      'weekly across weeks',
      { weekly: { day: 'tuesday' } },
      '2026-03-05T12:00:00Z',
      '2026-03-10T00:00:00.000Z',
    ],
    [
      'weekly on sunday, the last day',
      { weekly: { day: 'sunday', hour: 23, minute: 59 } },
      '2026-03-02T00:00:00Z',
      '2026-03-08T23:59:00.000Z',
    ],
    [
      'weekly on thursday, the day Unix time began',
      { weekly: { day: 'thursday' } },
      '1970-01-01T00:00:00Z',
      '1970-01-08T00:00:00.000Z',
    ],
    [
      'weekly at the end of the year',
      { weekly: { day: 'friday', hour: 9 } },
      '2026-12-28T00:00:00Z',
      '2027-01-01T09:00:00.000Z',
    ],
    [
      'weekly into a leap day',
      { weekly: { day: 'tuesday', hour: 9 } },
      '2028-02-23T00:00:00Z',
      '2028-02-29T09:00:00.000Z',
    ],
  ])('%s', (_case, schedule, after, expected) => {
    expect(iso(nextTick(schedule, at(after)))).toBe(expected);
  });
});

describe('scheduleKey', () => {
  it.each<[string, TimeSchedule, TimeSchedule]>([
    ['omitted members are zero', { daily: { hour: 3 } }, { daily: { second: 0, minute: 0, hour: 3 } }],
    ['missed does not count', { hourly: { minute: 5 } }, { hourly: { minute: 5 }, missed: 'run_all' }],
    ['kinds that tick alike', { periodic: 3600 }, { hourly: {} }],
    [
      'offsets of a oneshot',
      { oneshot: '2026-03-01T12:00:00+02:00' },
      { oneshot: '2026-03-01T10:00:00.000Z' },
    ],
  ])('is the same when %s', (_case, a, b) => {
    expect(scheduleKey(a)).toBe(scheduleKey(b));
  });

  it.each<[string, TimeSchedule, TimeSchedule]>([
    ['the time changes', { daily: { hour: 3 } }, { daily: { hour: 4 } }],
    ['the kind changes', { daily: {} }, { weekly: { day: 'monday' } }],
    ['the day changes', { weekly: { day: 'monday' } }, { weekly: { day: 'tuesday' } }],
    ['the period changes', { periodic: 60 }, { periodic: 61 }],
  ])('differs when %s', (_case, a, b) => {
    expect(scheduleKey(a)).not.toBe(scheduleKey(b));
  });
});

describe('planTicks', () => {
  const plan = (
    schedule: TimeSchedule,
    next: string,
    now: string,
    limits = { lateAfterMs: 60_000, catchUpLimit: 100 },
  ) => {
    const { ticks, next: following } = planTicks(schedule, { next: at(next), now: at(now), ...limits });
    return { ticks: ticks.map(iso), next: iso(following) };
  };

  it('plans nothing before the next tick', () => {
    expect(plan({ periodic: 60 }, '2026-03-01T10:01:00Z', '2026-03-01T10:00:59.999Z')).toEqual({
      ticks: [],
      next: '2026-03-01T10:01:00.000Z',
    });
  });

  it('runs a tick at its time, and a tick late by less than lateAfterMs, whatever the policy', () => {
    for (const missed of ['skip', 'run_once', 'run_all'] as const) {
      expect(plan({ hourly: {}, missed }, '2026-03-01T10:00:00Z', '2026-03-01T10:00:00Z')).toEqual({
        ticks: ['2026-03-01T10:00:00.000Z'],
        next: '2026-03-01T11:00:00.000Z',
      });
      expect(plan({ hourly: {}, missed }, '2026-03-01T10:00:00Z', '2026-03-01T10:01:00Z').ticks).toEqual([
        '2026-03-01T10:00:00.000Z',
      ]);
    }
  });

  // The server was down from 07:30 to 10:00:30: the ticks of 08:00 and 09:00 were missed, the
  // one of 10:00 is on time.
  it.each<[string, TimeSchedule, string[]]>([
    ['skip', { hourly: {}, missed: 'skip' }, ['2026-03-01T10:00:00.000Z']],
    ['run_once, the default', { hourly: {} }, ['2026-03-01T09:00:00.000Z', '2026-03-01T10:00:00.000Z']],
    [
      'run_all',
      { hourly: {}, missed: 'run_all' },
      ['2026-03-01T08:00:00.000Z', '2026-03-01T09:00:00.000Z', '2026-03-01T10:00:00.000Z'],
    ],
  ])('handles missed ticks with %s', (_case, schedule, ticks) => {
    expect(plan(schedule, '2026-03-01T08:00:00Z', '2026-03-01T10:00:30Z')).toEqual({
      ticks,
      next: '2026-03-01T11:00:00.000Z',
    });
  });

  it('handles a missed tick alone when none is on time', () => {
    const schedule: TimeSchedule = { daily: { hour: 3 } };
    expect(plan(schedule, '2026-03-01T03:00:00Z', '2026-03-01T15:00:00Z')).toEqual({
      ticks: ['2026-03-01T03:00:00.000Z'],
      next: '2026-03-02T03:00:00.000Z',
    });
    expect(
      plan({ ...schedule, missed: 'skip' }, '2026-03-01T03:00:00Z', '2026-03-01T15:00:00Z').ticks,
    ).toEqual([]);
  });

  it('runs at most the latest catchUpLimit missed ticks with run_all', () => {
    // A year of missed ticks every second: only the latest 100 run, at once.
    const { ticks, next } = plan(
      { periodic: 1, missed: 'run_all' },
      '2025-03-01T00:00:00Z',
      '2026-03-01T00:00:00Z',
      {
        lateAfterMs: 0,
        catchUpLimit: 100,
      },
    );
    expect(ticks).toHaveLength(101);
    expect(ticks.slice(0, 2)).toEqual(['2026-02-28T23:58:20.000Z', '2026-02-28T23:58:21.000Z']);
    expect(ticks.slice(-2)).toEqual(['2026-02-28T23:59:59.000Z', '2026-03-01T00:00:00.000Z']);
    expect(next).toBe('2026-03-01T00:00:01.000Z');
  });

  it('bounds the ticks on time by catchUpLimit too', () => {
    const { ticks } = plan({ periodic: 1 }, '2026-03-01T00:00:00Z', '2026-03-01T00:01:00Z', {
      lateAfterMs: 60_000,
      catchUpLimit: 10,
    });
    expect(ticks).toHaveLength(10);
    expect(ticks.at(-1)).toBe('2026-03-01T00:01:00.000Z');
  });

  it.each<[string, TimeSchedule, string[]]>([
    ['skip', { oneshot: '2026-03-01T10:00:00Z', missed: 'skip' }, []],
    ['run_once', { oneshot: '2026-03-01T10:00:00Z', missed: 'run_once' }, ['2026-03-01T10:00:00.000Z']],
    ['run_all', { oneshot: '2026-03-01T10:00:00Z', missed: 'run_all' }, ['2026-03-01T10:00:00.000Z']],
  ])('ends a missed oneshot with %s', (_case, schedule, ticks) => {
    expect(plan(schedule, '2026-03-01T10:00:00Z', '2026-03-02T00:00:00Z')).toEqual({
      ticks,
      next: undefined,
    });
  });
});
