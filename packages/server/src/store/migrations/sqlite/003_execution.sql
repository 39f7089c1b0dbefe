-- Events, command executions, pipelines, tasks, step executions and their output,
-- scratchpads, and the short-lived API keys of running tasks.

CREATE TABLE events (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  trigger_id TEXT,
  command_id TEXT,
  creation_time TEXT NOT NULL,
  event_time TEXT NOT NULL,
  connector TEXT NOT NULL,
  name TEXT NOT NULL,
  data TEXT NOT NULL CHECK (json_valid(data)),
  original_event_id TEXT
) STRICT;
CREATE INDEX events_by_project_id ON events (project_id, id);
CREATE INDEX events_by_project_time ON events (project_id, event_time, id);
CREATE INDEX events_by_project_name ON events (project_id, connector, name, id);

CREATE TABLE command_executions (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  executor_id TEXT,
  execution_time TEXT NOT NULL,
  command_id TEXT NOT NULL,
  parameters TEXT NOT NULL CHECK (json_valid(parameters)),
  event_id TEXT NOT NULL,
  pipeline_ids TEXT NOT NULL CHECK (json_valid(pipeline_ids))
) STRICT;
CREATE INDEX command_executions_by_project_id ON command_executions (project_id, id);
CREATE INDEX command_executions_by_project_time ON command_executions (project_id, execution_time, id);
CREATE INDEX command_executions_by_command ON command_executions (project_id, command_id, id);

-- A pipeline keeps the specs it was instantiated with (`spec`), and the environment
-- variables its command's parameters give every task (`environment`).
CREATE TABLE pipelines (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  pipeline_id TEXT REFERENCES resources (id) ON DELETE SET NULL,
  trigger_id TEXT,
  command_id TEXT,
  event_id TEXT NOT NULL,
  event_time TEXT NOT NULL,
  concurrent INTEGER NOT NULL,
  creation_time TEXT NOT NULL,
  start_time TEXT,
  end_time TEXT,
  status TEXT NOT NULL CHECK (status IN ('created', 'started', 'successful', 'failed', 'aborted')),
  spec TEXT NOT NULL CHECK (json_valid(spec)),
  environment TEXT NOT NULL CHECK (json_valid(environment))
) STRICT;
CREATE INDEX pipelines_by_project_id ON pipelines (project_id, id);
CREATE INDEX pipelines_by_project_event_time ON pipelines (project_id, event_time, id);
CREATE INDEX pipelines_by_project_creation_time ON pipelines (project_id, creation_time, id);
CREATE INDEX pipelines_by_project_status ON pipelines (project_id, status, id);
CREATE INDEX pipelines_by_event ON pipelines (event_id);
-- Unfinished pipelines: what the scheduler looks at.
CREATE INDEX pipelines_unfinished ON pipelines (project_id, name, creation_time, id)
  WHERE status IN ('created', 'started');

CREATE TABLE tasks (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  pipeline_id TEXT NOT NULL REFERENCES pipelines (id) ON DELETE CASCADE,
  task_id TEXT REFERENCES resources (id) ON DELETE SET NULL,
  name TEXT NOT NULL,
  pipeline_task TEXT NOT NULL CHECK (json_valid(pipeline_task)),
  spec TEXT NOT NULL CHECK (json_valid(spec)),
  task_identities TEXT NOT NULL CHECK (json_valid(task_identities)),
  dependencies TEXT NOT NULL CHECK (json_valid(dependencies)),
  instance_id INTEGER NOT NULL,
  retry INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('created', 'started', 'successful', 'failed', 'aborted')),
  creation_time TEXT NOT NULL,
  start_time TEXT,
  end_time TEXT,
  failure_message TEXT,
  -- A task waiting for a retry runs no earlier than this.
  not_before TEXT
) STRICT;
CREATE INDEX tasks_by_project_id ON tasks (project_id, id);
CREATE INDEX tasks_by_project_creation_time ON tasks (project_id, creation_time, id);
CREATE INDEX tasks_by_project_status ON tasks (project_id, status, id);
CREATE INDEX tasks_by_pipeline ON tasks (pipeline_id, name, id);
CREATE INDEX tasks_by_project_pipeline ON tasks (project_id, pipeline_id, id);
CREATE INDEX tasks_waiting ON tasks (not_before) WHERE status = 'created';
CREATE INDEX tasks_running ON tasks (pipeline_id) WHERE status = 'started';

CREATE TABLE step_executions (
  task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
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
  PRIMARY KEY (task_id, attempt, step_index)
) STRICT, WITHOUT ROWID;

-- Output is appended chunk by chunk while a step runs, never rewritten.
CREATE INDEX step_executions_running ON step_executions (process_group) WHERE status = 'started';

CREATE TABLE step_output_chunks (
  task_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  step_index INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  text TEXT NOT NULL,
  PRIMARY KEY (task_id, attempt, step_index, seq),
  FOREIGN KEY (task_id, attempt, step_index) REFERENCES step_executions (task_id, attempt, step_index) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE TABLE scratchpad_entries (
  pipeline_id TEXT NOT NULL REFERENCES pipelines (id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (pipeline_id, key)
) STRICT, WITHOUT ROWID;

-- The key a running task finds in PIPEWRIGHT_API_KEY: limited to the task's project and
-- valid only while that task is started (authentication joins the task's status).
CREATE TABLE task_keys (
  id TEXT PRIMARY KEY,
  task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  secret_hash BLOB NOT NULL
) STRICT;
CREATE INDEX task_keys_by_task ON task_keys (task_id);

-- The triggers an event name activates, across the projects of an organization.
CREATE INDEX resources_triggers ON resources (
  org_id, json_extract(spec, '$.data.connector'), json_extract(spec, '$.data.event'), project_id
) WHERE type = 'trigger';
