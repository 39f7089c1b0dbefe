import type { Schemas } from '@pipewright/types';
import { sql } from 'kysely';
import type { Dialect } from './dialect.js';
import type { Executor } from './sql.js';

type TriggerData = Extract<Schemas['ResourceSpec'], { type: 'trigger' }>['data'];
export type TimeTriggerData = Extract<TriggerData, { connector: 'time' }>;

/** Where the ticker is in a trigger's schedule. */
export interface ScheduleState {
  /** Identifies the schedule `next_tick_time` was planned from. */
  schedule_key: string;
  /** The first tick not handled yet; null when none is left. */
  next_tick_time: string | null;
}

/** A trigger of connector `time`, with its schedule state. */
export interface TimeTrigger {
  id: string;
  org_id: string;
  project_id: string;
  /** When its spec last changed: a new or changed schedule starts from there. */
  update_time: string;
  /** The trigger or its organization is disabled. */
  disabled: boolean;
  data: TimeTriggerData;
  /** Absent until the ticker first plans the schedule. */
  state?: ScheduleState;
}

interface TimeTriggerRow {
  id: string;
  org_id: string;
  project_id: string;
  update_time: string;
  disabled: number;
  org_disabled: number;
  data: string;
  schedule_key: string | null;
  next_tick_time: string | null;
}

function toTimeTrigger(row: TimeTriggerRow): TimeTrigger {
  const { disabled, org_disabled, data, schedule_key, next_tick_time, ...rest } = row;
  return {
    ...rest,
    disabled: disabled === 1 || org_disabled === 1,
    data: JSON.parse(data) as TimeTriggerData,
    ...(schedule_key === null ? {} : { state: { schedule_key, next_tick_time } }),
  };
}

/** The triggers of connector `time` across organizations, and where each is in its schedule. */
export function createTriggerScheduleStore(d: Dialect, x: Executor) {
  const { q } = d;
  // The WHERE terms of the partial index resources_time_triggers, which the planner matches:
  // they must be written as the index's are, with literals, not parameters.
  const timeTriggers = q
    .selectFrom('resources as r')
    .innerJoin('organizations as o', 'o.id', 'r.org_id')
    .leftJoin('trigger_schedules as s', 's.trigger_id', 'r.id')
    .select([
      'r.id',
      'r.org_id',
      'r.project_id',
      'r.update_time',
      'r.disabled',
      'o.disabled as org_disabled',
      d.jsonText('r.spec', 'data').$castTo<string>().as('data'),
      's.schedule_key',
      's.next_tick_time',
    ])
    .where('r.type', '=', sql.lit('trigger'))
    .where(d.jsonText('r.spec', 'data', 'connector'), '=', sql.lit('time'));
  return {
    async list(): Promise<TimeTrigger[]> {
      return (await x.all(timeTriggers.orderBy('r.id'))).map(toTimeTrigger);
    },
    async get(id: string): Promise<TimeTrigger | undefined> {
      const row = await x.first(timeTriggers.where('r.id', '=', id));
      return row && toTimeTrigger(row);
    },
    async save(triggerId: string, state: ScheduleState): Promise<void> {
      await x.run(
        q
          .insertInto('trigger_schedules')
          .values({
            trigger_id: triggerId,
            schedule_key: state.schedule_key,
            next_tick_time: state.next_tick_time,
          })
          .onConflict((oc) =>
            oc.column('trigger_id').doUpdateSet((eb) => ({
              schedule_key: eb.ref('excluded.schedule_key'),
              next_tick_time: eb.ref('excluded.next_tick_time'),
            })),
          ),
      );
    },
    /** Ids of triggers that have a schedule state but are no longer time triggers. */
    async stale(): Promise<string[]> {
      // Rows of deleted triggers go with them (ON DELETE CASCADE); these are of triggers whose
      // connector is no longer `time`. CROSS JOIN keeps the small table outside: a row per
      // schedule, not per resource (on SQLite, a CROSS JOIN fixes the order of the join).
      const rows = await x.all(
        q
          .selectFrom('trigger_schedules as s')
          .crossJoin('resources as r')
          .select('s.trigger_id')
          .whereRef('r.id', '=', 's.trigger_id')
          .where(d.jsonText('r.spec', 'data', 'connector'), 'is distinct from', sql.lit('time')),
      );
      return rows.map((row) => row.trigger_id);
    },
    async forget(triggerId: string): Promise<void> {
      await x.run(q.deleteFrom('trigger_schedules').where('trigger_id', '=', triggerId));
    },
  };
}
