import type { Schemas } from '@pipewright/types';
import { nextTick, planTicks, scheduleKey } from '../domain/events/schedules.js';
import { filtersMatch } from '../domain/events/trigger-filters.js';
import { formatTime } from '../domain/time.js';
import type { Logger } from '../logger.js';
import { type Admission, createEventIntake, type WorkNotifier } from '../services/index.js';
import type { Store, TimeTrigger } from '../store/index.js';

type Event = Schemas['Event'];

export interface TickerOptions {
  /**
   * Longest sleep between two passes (default 10 s). Installs that change triggers wake the
   * ticker (`schedulesChanged`); this bounds how late it sees changes nobody tells it of,
   * such as an organization disabled in the database.
   */
  maxSleepMs?: number;
  /** A tick handled more than this after its time is a missed one (default 60 s, as the spec says). */
  lateAfterMs?: number;
  /** Most missed ticks `run_all` runs per trigger in one pass, the latest ones (default 100). */
  catchUpLimit?: number;
}

export interface TickPass {
  /** The tick events stored by this pass, each with its pipelines. */
  events: Event[];
  /** The earliest tick left to handle, if any. */
  nextTickTime?: Date | undefined;
  /** Triggers whose ticks failed (logged, rolled back); the next pass tries them again. */
  failures: number;
}

/** The first tick of the trigger not handled yet, from its state or, for a new or changed schedule, its install. */
function pendingTick(trigger: TimeTrigger, key: string): Date | undefined {
  const { state } = trigger;
  if (state?.schedule_key === key) {
    return state.next_tick_time === null ? undefined : new Date(state.next_tick_time);
  }
  return nextTick(trigger.data.parameters, new Date(trigger.update_time));
}

/**
 * The source of the events of the triggers of connector `time`: makes them when their ticks
 * are due, through the event intake, which instantiates the trigger's pipelines and wakes the
 * scheduler. `tickOnce` handles what is due at the clock's time (tests call it with a fake
 * clock); `start` runs it in a loop that sleeps until the earliest next tick, at most
 * `maxSleepMs`.
 */
export function createTicker(
  store: Store,
  work: Pick<WorkNotifier, 'wakeUp'>,
  logger: Logger,
  clock: () => Date = () => new Date(),
  options: TickerOptions = {},
) {
  const maxSleepMs = options.maxSleepMs ?? 10_000;
  const lateAfterMs = options.lateAfterMs ?? 60_000;
  const catchUpLimit = options.catchUpLimit ?? 100;

  const intake = createEventIntake(store, work, clock);

  /**
   * Claims the due ticks of one trigger: reads its state again under the write lock (another
   * server may have claimed them meanwhile), stores the events of those its filters accept,
   * with their pipelines, and advances the state, all in one IMMEDIATE transaction, so each
   * tick happens exactly once.
   */
  const claim = (id: string, now: Date): Promise<Admission<{ events: Event[]; next: Date | undefined }>> =>
    intake.transaction(async (admit, tx) => {
      const trigger = await tx.triggerSchedules.get(id);
      if (!trigger) return { events: [], next: undefined }; // deleted or changed meanwhile
      const schedule = trigger.data.parameters;
      const key = scheduleKey(schedule);
      const pending = pendingTick(trigger, key);
      const plan = pending
        ? planTicks(schedule, { next: pending, now, lateAfterMs, catchUpLimit })
        : { ticks: [], next: undefined };
      // The ticks of a disabled trigger pass without running.
      const ticks = trigger.disabled ? [] : plan.ticks;
      const events: Event[] = [];
      for (const tick of ticks) {
        const data = { scheduled_time: formatTime(tick) };
        if (!filtersMatch(trigger.data.filters, data)) continue;
        const { event } = await admit({
          org_id: trigger.org_id,
          project_id: trigger.project_id,
          trigger_id: trigger.id,
          connector: 'time',
          name: 'tick',
          data,
          event_time: data.scheduled_time,
        });
        events.push(event);
      }
      const next = plan.next ? formatTime(plan.next) : null;
      await tx.triggerSchedules.save(id, { schedule_key: key, next_tick_time: next });
      return { events, next: plan.next };
    }, now);

  /** States of triggers that stopped being time triggers: a later return plans anew. */
  const forgetStale = async () => {
    if ((await store.triggerSchedules.stale()).length === 0) return;
    await store.transaction(async (tx) => {
      for (const id of await tx.triggerSchedules.stale()) await tx.triggerSchedules.forget(id);
    });
  };

  const tickOnce = async (): Promise<TickPass> => {
    const now = clock();
    await forgetStale();
    const events: Event[] = [];
    let failures = 0;
    let earliest: Date | undefined;
    for (const trigger of await store.triggerSchedules.list()) {
      try {
        const key = scheduleKey(trigger.data.parameters);
        let next = pendingTick(trigger, key);
        // New, changed or due: claim (the first two save where the schedule starts).
        if (trigger.state?.schedule_key !== key || (next && next <= now)) {
          // The pass does not wait for the release of the pipelines: the intake wakes the
          // scheduler once their tasks are all written.
          const { result } = await claim(trigger.id, now);
          for (const event of result.events) events.push(event);
          next = result.next;
        }
        if (next && (!earliest || next < earliest)) earliest = next;
      } catch (error) {
        failures += 1;
        logger.error('failed to handle the ticks of a trigger', {
          trigger_id: trigger.id,
          error: String(error),
        });
      }
    }
    for (const event of events) {
      logger.debug('tick', { trigger_id: event.trigger_id, scheduled_time: event.event_time });
    }
    return { events, nextTickTime: earliest, failures };
  };

  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let failedPasses = 0;
  // A pass under way, and whether schedules changed during it: one pass at a time.
  let passing = false;
  let changedMeanwhile = false;

  const loop = async () => {
    timer = undefined;
    if (!running) return;
    let delay = maxSleepMs;
    passing = true;
    changedMeanwhile = false;
    try {
      const pass = await tickOnce();
      failedPasses = pass.failures > 0 ? failedPasses + 1 : 0;
      if (pass.nextTickTime) {
        delay = Math.min(delay, Math.max(0, pass.nextTickTime.getTime() - clock().getTime()));
      }
    } catch (error) {
      failedPasses += 1;
      logger.error('ticker failed', { error: String(error) });
    }
    passing = false;
    // Back off (up to maxSleepMs) rather than spin on a broken trigger or database.
    if (failedPasses > 0) delay = Math.min(delay, 100 * 2 ** failedPasses);
    if (changedMeanwhile) delay = 0;
    if (!running) return;
    timer = setTimeout(loop, delay);
    timer.unref();
  };

  return {
    tickOnce,
    /** A pass now rather than at the end of the sleep: the first tick of a new schedule is on time. */
    schedulesChanged(): void {
      if (!running) return; // start() runs a pass anyway
      if (passing) {
        changedMeanwhile = true;
        return;
      }
      if (timer) clearTimeout(timer);
      timer = setTimeout(loop, 0);
      timer.unref();
    },
    /** Handles due ticks now (missed ones by their policy), then keeps ticking. */
    start(): void {
      if (running) return;
      running = true;
      timer = setTimeout(loop, 0);
      timer.unref();
    },
    stop(): void {
      running = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

export type Ticker = ReturnType<typeof createTicker>;
