import type { Schemas } from '@pipewright/types';
import type { Db } from './db.js';

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
  data: string;
  schedule_key: string | null;
  next_tick_time: string | null;
}

function toTimeTrigger(row: TimeTriggerRow): TimeTrigger {
  const { disabled, data, schedule_key, next_tick_time, ...rest } = row;
  return {
    ...rest,
    disabled: disabled === 1,
    data: JSON.parse(data) as TimeTriggerData,
    ...(schedule_key === null ? {} : { state: { schedule_key, next_tick_time } }),
  };
}

// The WHERE terms of the partial index resources_time_triggers, which the planner matches.
const TIME_TRIGGERS = `
  SELECT r.id, r.org_id, r.project_id, r.update_time, (r.disabled OR o.disabled) AS disabled,
         json_extract(r.spec, '$.data') AS data, s.schedule_key, s.next_tick_time
  FROM resources r
  JOIN organizations o ON o.id = r.org_id
  LEFT JOIN trigger_schedules s ON s.trigger_id = r.id
  WHERE r.type = 'trigger' AND json_extract(r.spec, '$.data.connector') = 'time'`;

/** The triggers of connector `time` across organizations, and where each is in its schedule. */
export function createTriggerScheduleStore(db: Db) {
  const all = db.prepare<[], TimeTriggerRow>(`${TIME_TRIGGERS} ORDER BY r.id`);
  const one = db.prepare<[string], TimeTriggerRow>(`${TIME_TRIGGERS} AND r.id = ?`);
  // Rows of deleted triggers go with them (ON DELETE CASCADE); these are of triggers whose
  // connector is no longer `time`. CROSS JOIN keeps the small table outside: a row per
  // schedule, not per resource.
  const stale = db.prepare<[], { trigger_id: string }>(
    `SELECT s.trigger_id FROM trigger_schedules s CROSS JOIN resources r ON r.id = s.trigger_id
     WHERE json_extract(r.spec, '$.data.connector') IS NOT 'time'`,
  );
  const save = db.prepare<[string, string, string | null]>(
    `INSERT INTO trigger_schedules (trigger_id, schedule_key, next_tick_time) VALUES (?, ?, ?)
     ON CONFLICT (trigger_id) DO UPDATE SET
       schedule_key = excluded.schedule_key, next_tick_time = excluded.next_tick_time`,
  );
  const forget = db.prepare<[string]>('DELETE FROM trigger_schedules WHERE trigger_id = ?');
  return {
    list(): TimeTrigger[] {
      return all.all().map(toTimeTrigger);
    },
    get(id: string): TimeTrigger | undefined {
      const row = one.get(id);
      return row && toTimeTrigger(row);
    },
    save(triggerId: string, state: ScheduleState): void {
      save.run(triggerId, state.schedule_key, state.next_tick_time);
    },
    /** Ids of triggers that have a schedule state but are no longer time triggers. */
    stale(): string[] {
      return stale.all().map((row) => row.trigger_id);
    },
    forget(triggerId: string): void {
      forget.run(triggerId);
    },
  };
}
