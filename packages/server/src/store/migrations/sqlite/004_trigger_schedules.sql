-- Where each trigger of connector `time` is in its schedule: the schedule its next tick was
-- planned from (a key that ignores how the schedule is written) and that tick, NULL once a
-- oneshot has ticked. Claiming ticks reads and advances the row in the IMMEDIATE
-- transaction that stores their events and pipelines: each tick happens exactly once, even
-- with several servers on the database, and a crash loses or repeats none.

CREATE TABLE trigger_schedules (
  trigger_id TEXT PRIMARY KEY REFERENCES resources (id) ON DELETE CASCADE,
  schedule_key TEXT NOT NULL,
  next_tick_time TEXT
) STRICT, WITHOUT ROWID;

-- The time triggers of every organization, which the ticker reads on each pass.
CREATE INDEX resources_time_triggers ON resources (id)
  WHERE type = 'trigger' AND json_extract(spec, '$.data.connector') = 'time';
