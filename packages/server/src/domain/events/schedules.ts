import type { Schemas } from '@pipewright/types';

type TimeSchedule = Schemas['TimeSchedule'];
export type MissedTicks = NonNullable<TimeSchedule['missed']>;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
/** 1970-01-01, the origin of Unix time, was a Thursday: the first Monday began 4 days later. */
const FIRST_MONDAY = 4 * DAY;

/**
 * When a schedule ticks, as arithmetic on Unix time in milliseconds. Everything is UTC, which
 * has neither daylight saving time nor (in Unix time) leap seconds, so every recurring kind is
 * a fixed period and an offset: ticks at `offset + k * period` for every integer k.
 */
type Cadence = { once: number } | { period: number; offset: number };

const timeOfDay = (at: { hour?: number; minute?: number; second?: number }) =>
  (at.hour ?? 0) * HOUR + (at.minute ?? 0) * MINUTE + (at.second ?? 0) * SECOND;

function cadenceOf(schedule: TimeSchedule): Cadence {
  if (schedule.oneshot !== undefined) return { once: Date.parse(schedule.oneshot) };
  if (schedule.periodic !== undefined) return { period: schedule.periodic * SECOND, offset: 0 };
  if (schedule.hourly) return { period: HOUR, offset: timeOfDay(schedule.hourly) };
  if (schedule.daily) return { period: DAY, offset: timeOfDay(schedule.daily) };
  if (schedule.weekly) {
    const day = WEEKDAYS.indexOf(schedule.weekly.day);
    return { period: WEEK, offset: ((FIRST_MONDAY + day * DAY) % WEEK) + timeOfDay(schedule.weekly) };
  }
  // Installs validate schedules against the spec, which requires one of the kinds above.
  throw new Error(`not a schedule: ${JSON.stringify(schedule)}`);
}

/** The first tick at or after `t` (ms), if any. */
function firstAtOrAfter(cadence: Cadence, t: number): number | undefined {
  if ('once' in cadence) return cadence.once >= t ? cadence.once : undefined;
  const { period, offset } = cadence;
  return offset + Math.ceil((t - offset) / period) * period;
}

/** The latest `limit` ticks in [from, to) (ms), oldest first. */
function ticksBetween(cadence: Cadence, from: number, to: number, limit: number): number[] {
  if ('once' in cadence) return from <= cadence.once && cadence.once < to && limit > 0 ? [cadence.once] : [];
  const first = firstAtOrAfter(cadence, from) as number;
  const last = (firstAtOrAfter(cadence, to) as number) - cadence.period;
  const ticks: number[] = [];
  for (let t = Math.max(first, last - (limit - 1) * cadence.period); t <= last; t += cadence.period) {
    ticks.push(t);
  }
  return ticks;
}

/**
 * What identifies when a schedule ticks, ignoring how it is written (omitted members, key
 * order) and `missed`: two schedules with the same key tick at the same times.
 */
export function scheduleKey(schedule: TimeSchedule): string {
  const cadence = cadenceOf(schedule);
  return 'once' in cadence
    ? `once at ${new Date(cadence.once).toISOString()}`
    : `every ${cadence.period} ms from ${cadence.offset} ms`;
}

/** The first tick strictly after `after`; undefined when none is left (a past oneshot). */
export function nextTick(schedule: TimeSchedule, after: Date): Date | undefined {
  const tick = firstAtOrAfter(cadenceOf(schedule), after.getTime() + 1);
  return tick === undefined ? undefined : new Date(tick);
}

export interface TickPlanRequest {
  /** The first tick not handled yet. */
  next: Date;
  now: Date;
  /** A tick handled more than this after its time is a missed one. */
  lateAfterMs: number;
  /** Most missed ticks `run_all` runs at once, the latest ones; also bounds the ticks on time. */
  catchUpLimit: number;
}

export interface TickPlan {
  /** The scheduled times of the ticks to run now, oldest first. */
  ticks: Date[];
  /** The first tick after `now`, to handle later; undefined when none is left. */
  next: Date | undefined;
}

/**
 * The due ticks of a schedule to run at `now`, given the first one not handled yet. Ticks
 * late by no more than `lateAfterMs` are on time and run; older ones are missed, and the
 * schedule's `missed` policy (default `run_once`) says which of them run.
 */
export function planTicks(schedule: TimeSchedule, request: TickPlanRequest): TickPlan {
  const cadence = cadenceOf(schedule);
  const next = request.next.getTime();
  const now = request.now.getTime();
  const missedBefore = now - request.lateAfterMs;
  const limit = request.catchUpLimit;
  if (next > now) return { ticks: [], next: request.next };

  const missedLimit: Record<MissedTicks, number> = { skip: 0, run_once: 1, run_all: limit };
  const missed =
    next < missedBefore
      ? ticksBetween(cadence, next, missedBefore, missedLimit[schedule.missed ?? 'run_once'])
      : [];
  const onTime = ticksBetween(cadence, Math.max(next, missedBefore), now + 1, limit);
  const following = firstAtOrAfter(cadence, now + 1);
  return {
    ticks: [...missed, ...onTime].map((t) => new Date(t)),
    next: following === undefined ? undefined : new Date(following),
  };
}
