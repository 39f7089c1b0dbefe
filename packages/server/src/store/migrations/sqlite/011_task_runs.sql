-- Every run of a task is kept: a restart of its pipeline starts the task's next run instead of
-- removing the step executions of the last one. `tasks.run` numbers the current run (1 from
-- the task's creation); a step execution and its output chunks belong to one run, which joins
-- their keys. What was stored before belongs to run 1: restarts removed the earlier runs.
ALTER TABLE tasks ADD COLUMN run INTEGER NOT NULL DEFAULT 1;

-- A primary key cannot change in place: the two tables are made anew with `run` in their keys
-- (its default, 1, keeps writers that do not name a run writing to the first), the rows copied,
-- the old tables dropped (the chunks first: dropping step_executions while chunks refer to it
-- would cascade), the new ones renamed, which renames the chunks' reference too.
CREATE TABLE step_executions_by_run (
  task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  run INTEGER NOT NULL DEFAULT 1,
  attempt INTEGER NOT NULL,
  step_index INTEGER NOT NULL,
  label TEXT,
  status TEXT NOT NULL CHECK (status IN ('started', 'successful', 'failed', 'aborted')),
  exit_code INTEGER,
  start_time TEXT NOT NULL,
  end_time TEXT,
  output_truncated INTEGER NOT NULL DEFAULT 0,
  -- The process group of a running step, to stop it should the server die meanwhile.
  process_group INTEGER,
  process_identity TEXT,
  PRIMARY KEY (task_id, run, attempt, step_index)
) STRICT, WITHOUT ROWID;
INSERT INTO step_executions_by_run (task_id, run, attempt, step_index, label, status, exit_code, start_time,
                                    end_time, output_truncated, process_group, process_identity)
  SELECT task_id, 1, attempt, step_index, label, status, exit_code, start_time, end_time, output_truncated,
         process_group, process_identity
  FROM step_executions;

-- Output is appended chunk by chunk while a step runs, never rewritten.
CREATE TABLE step_output_chunks_by_run (
  task_id TEXT NOT NULL,
  run INTEGER NOT NULL DEFAULT 1,
  attempt INTEGER NOT NULL,
  step_index INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  text TEXT NOT NULL,
  PRIMARY KEY (task_id, run, attempt, step_index, seq),
  FOREIGN KEY (task_id, run, attempt, step_index)
    REFERENCES step_executions_by_run (task_id, run, attempt, step_index) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
INSERT INTO step_output_chunks_by_run (task_id, run, attempt, step_index, seq, text)
  SELECT task_id, 1, attempt, step_index, seq, text FROM step_output_chunks;

DROP TABLE step_output_chunks;
DROP TABLE step_executions;
ALTER TABLE step_executions_by_run RENAME TO step_executions;
ALTER TABLE step_output_chunks_by_run RENAME TO step_output_chunks;
CREATE INDEX step_executions_running ON step_executions (process_group) WHERE status = 'started';
