-- Retention (scheduler/purger.ts): what finds expired rows without scanning the tables.

-- Finished pipelines with a retention of their own, by the day (Julian) they expire.
CREATE INDEX pipelines_expiring ON pipelines (julianday(end_time) + json_extract(spec, '$.data.retention'))
  WHERE status IN ('successful', 'failed', 'aborted') AND json_extract(spec, '$.data.retention') IS NOT NULL;
-- Finished pipelines without one, by their end: the server's retention of pipelines and of
-- step output applies to them.
CREATE INDEX pipelines_ended_without_retention ON pipelines (end_time, id)
  WHERE status IN ('successful', 'failed', 'aborted') AND json_extract(spec, '$.data.retention') IS NULL;
-- Events by storage time, across projects, and the command execution of each event.
CREATE INDEX events_by_creation_time ON events (creation_time, id);
CREATE INDEX command_executions_by_event ON command_executions (event_id);

-- How far a purge that walks a table in order has gone (`step_output`, `events`): rows up to
-- (time, id) were handled. Advanced in the transaction of each batch: after a crash the walk
-- resumes after the last batch committed.
CREATE TABLE retention_progress (
  name TEXT PRIMARY KEY,
  time TEXT NOT NULL,
  id TEXT NOT NULL
) STRICT, WITHOUT ROWID;
