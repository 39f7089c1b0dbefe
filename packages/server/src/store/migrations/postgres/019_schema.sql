-- The schema that SQLite's migrations 001 to 019 make, in PostgreSQL's terms: a PostgreSQL
-- database starts at version 19, and from 020 on each migration is written for both.
-- Texts compare byte by byte (COLLATE "C"), as SQLite's do, so that pages and cursors keep
-- SQLite's order; JSON is kept as text, as on SQLite; flags are integers 0 and 1.

-- Days since the Unix epoch of a stored time (ISO 8601 in UTC). The cast depends on no setting
-- for these texts, which end in Z, so the function can be IMMUTABLE, as an index needs.
CREATE FUNCTION epoch_days(t text) RETURNS float8 IMMUTABLE STRICT PARALLEL SAFE LANGUAGE sql
  AS $$ SELECT extract(epoch FROM t::timestamptz)::float8 / 86400 $$;

CREATE TABLE organizations (
  id TEXT COLLATE "C" PRIMARY KEY,
  name TEXT COLLATE "C" NOT NULL UNIQUE,
  creation_time TEXT COLLATE "C" NOT NULL,
  disabled BIGINT NOT NULL DEFAULT 0,
  address TEXT COLLATE "C" NOT NULL DEFAULT '',
  postal_code TEXT COLLATE "C" NOT NULL DEFAULT '',
  city TEXT COLLATE "C" NOT NULL DEFAULT '',
  country TEXT COLLATE "C" NOT NULL DEFAULT '',
  contact_email_address TEXT COLLATE "C" NOT NULL DEFAULT '',
  non_essential_mail_opt_in BIGINT NOT NULL DEFAULT 0,
  vat_id_number TEXT COLLATE "C"
);

CREATE TABLE projects (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name TEXT COLLATE "C" NOT NULL,
  UNIQUE (org_id, name)
);

CREATE TABLE accounts (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  creation_time TEXT COLLATE "C" NOT NULL,
  disabled BIGINT NOT NULL DEFAULT 0,
  email_address TEXT COLLATE "C" NOT NULL UNIQUE,
  name TEXT COLLATE "C",
  role TEXT COLLATE "C" NOT NULL CHECK (role IN ('admin', 'user')),
  last_login_time TEXT COLLATE "C",
  last_project_id TEXT COLLATE "C" REFERENCES projects (id) ON DELETE SET NULL,
  date_format TEXT COLLATE "C" NOT NULL DEFAULT 'relative' CHECK (date_format IN ('relative', 'absolute'))
);

CREATE TABLE api_keys (
  id TEXT COLLATE "C" PRIMARY KEY,
  account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  secret_hash BYTEA NOT NULL,
  creation_time TEXT COLLATE "C" NOT NULL,
  revoked BIGINT NOT NULL DEFAULT 0,
  org_id TEXT COLLATE "C" REFERENCES organizations (id) ON DELETE CASCADE,
  name TEXT COLLATE "C",
  revocation_time TEXT COLLATE "C"
);

CREATE TABLE resources (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL,
  project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  type TEXT COLLATE "C" NOT NULL CHECK (type IN ('trigger', 'command', 'pipeline', 'task')),
  name TEXT COLLATE "C" NOT NULL,
  creation_time TEXT COLLATE "C" NOT NULL,
  update_time TEXT COLLATE "C" NOT NULL,
  disabled BIGINT NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
  spec TEXT COLLATE "C" NOT NULL,
  installation TEXT COLLATE "C",
  staged TEXT COLLATE "C" CHECK (staged IN ('create', 'update', 'delete')),
  staged_spec TEXT COLLATE "C",
  UNIQUE (project_id, type, name)
);

CREATE TABLE events (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL,
  project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  trigger_id TEXT COLLATE "C",
  command_id TEXT COLLATE "C",
  creation_time TEXT COLLATE "C" NOT NULL,
  event_time TEXT COLLATE "C" NOT NULL,
  connector TEXT COLLATE "C" NOT NULL,
  name TEXT COLLATE "C" NOT NULL,
  data TEXT COLLATE "C" NOT NULL,
  original_event_id TEXT COLLATE "C"
);

CREATE TABLE command_executions (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL,
  project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  executor_id TEXT COLLATE "C",
  execution_time TEXT COLLATE "C" NOT NULL,
  command_id TEXT COLLATE "C" NOT NULL,
  parameters TEXT COLLATE "C" NOT NULL,
  event_id TEXT COLLATE "C" NOT NULL,
  pipeline_ids TEXT COLLATE "C" NOT NULL
);

CREATE TABLE pipelines (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL,
  project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name TEXT COLLATE "C" NOT NULL,
  pipeline_id TEXT COLLATE "C" REFERENCES resources (id) ON DELETE SET NULL,
  trigger_id TEXT COLLATE "C",
  command_id TEXT COLLATE "C",
  event_id TEXT COLLATE "C" NOT NULL,
  event_time TEXT COLLATE "C" NOT NULL,
  concurrent BIGINT NOT NULL,
  creation_time TEXT COLLATE "C" NOT NULL,
  start_time TEXT COLLATE "C",
  end_time TEXT COLLATE "C",
  status TEXT COLLATE "C" NOT NULL CHECK (status IN ('created', 'started', 'successful', 'failed', 'aborted')),
  spec TEXT COLLATE "C" NOT NULL,
  environment TEXT COLLATE "C" NOT NULL,
  queued BIGINT NOT NULL DEFAULT 0,
  pending_tasks TEXT COLLATE "C",
  released_through TEXT COLLATE "C"
);

CREATE TABLE tasks (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL,
  project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  pipeline_id TEXT COLLATE "C" NOT NULL REFERENCES pipelines (id) ON DELETE CASCADE,
  task_id TEXT COLLATE "C" REFERENCES resources (id) ON DELETE SET NULL,
  name TEXT COLLATE "C" NOT NULL,
  pipeline_task TEXT COLLATE "C" NOT NULL,
  spec TEXT COLLATE "C" NOT NULL,
  task_identities TEXT COLLATE "C" NOT NULL,
  dependencies TEXT COLLATE "C" NOT NULL,
  instance_id BIGINT NOT NULL,
  retry BIGINT NOT NULL DEFAULT 0,
  status TEXT COLLATE "C" NOT NULL CHECK (status IN ('created', 'started', 'successful', 'failed', 'aborted')),
  creation_time TEXT COLLATE "C" NOT NULL,
  start_time TEXT COLLATE "C",
  end_time TEXT COLLATE "C",
  failure_message TEXT COLLATE "C",
  -- A task waiting for a retry runs no earlier than this.
  not_before TEXT COLLATE "C",
  blockers BIGINT NOT NULL DEFAULT 0,
  dependents TEXT COLLATE "C" NOT NULL DEFAULT '[]',
  run BIGINT NOT NULL DEFAULT 1
);

CREATE TABLE scratchpad_entries (
  pipeline_id TEXT COLLATE "C" NOT NULL REFERENCES pipelines (id) ON DELETE CASCADE,
  key TEXT COLLATE "C" NOT NULL,
  value TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (pipeline_id, key)
);

CREATE TABLE task_keys (
  id TEXT COLLATE "C" PRIMARY KEY,
  task_id TEXT COLLATE "C" NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  secret_hash BYTEA NOT NULL
);

CREATE TABLE trigger_schedules (
  trigger_id TEXT COLLATE "C" PRIMARY KEY REFERENCES resources (id) ON DELETE CASCADE,
  schedule_key TEXT COLLATE "C" NOT NULL,
  next_tick_time TEXT COLLATE "C"
);

CREATE TABLE retention_progress (
  name TEXT COLLATE "C" PRIMARY KEY,
  time TEXT COLLATE "C" NOT NULL,
  id TEXT COLLATE "C" NOT NULL
);

CREATE TABLE step_executions (
  task_id TEXT COLLATE "C" NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  run BIGINT NOT NULL DEFAULT 1,
  attempt BIGINT NOT NULL,
  step_index BIGINT NOT NULL,
  label TEXT COLLATE "C",
  status TEXT COLLATE "C" NOT NULL CHECK (status IN ('started', 'successful', 'failed', 'aborted')),
  exit_code BIGINT,
  start_time TEXT COLLATE "C" NOT NULL,
  end_time TEXT COLLATE "C",
  output_truncated BIGINT NOT NULL DEFAULT 0,
  -- The process group of a running step, to stop it should the server die meanwhile.
  process_group BIGINT,
  process_identity TEXT COLLATE "C",
  PRIMARY KEY (task_id, run, attempt, step_index)
);

CREATE TABLE step_output_chunks (
  task_id TEXT COLLATE "C" NOT NULL,
  run BIGINT NOT NULL DEFAULT 1,
  attempt BIGINT NOT NULL,
  step_index BIGINT NOT NULL,
  seq BIGINT NOT NULL,
  text TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (task_id, run, attempt, step_index, seq),
  FOREIGN KEY (task_id, run, attempt, step_index)
    REFERENCES step_executions (task_id, run, attempt, step_index) ON DELETE CASCADE
);

CREATE TABLE changes (
  seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  -- NULL for changes of access (`access`), which concern an organization.
  project_id TEXT COLLATE "C",
  -- pipeline, task, event: that object (created, or its status changed); output: the task
  -- `id` printed, or a step of it ended; project: the project was deleted; access:
  -- a key, account or the organization `id` was revoked, disabled or deleted.
  kind TEXT COLLATE "C" NOT NULL,
  id TEXT COLLATE "C" NOT NULL
);

CREATE TABLE webhooks (
  trigger_id TEXT COLLATE "C" PRIMARY KEY REFERENCES resources (id) ON DELETE CASCADE,
  hook_id TEXT COLLATE "C" NOT NULL,
  hook_digest BYTEA NOT NULL UNIQUE,
  secret TEXT COLLATE "C",
  secret_update_time TEXT COLLATE "C"
);

CREATE TABLE webhook_deliveries (
  trigger_id TEXT COLLATE "C" NOT NULL REFERENCES webhooks (trigger_id) ON DELETE CASCADE,
  fingerprint TEXT COLLATE "C" NOT NULL,
  receipt_time TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (trigger_id, fingerprint)
);

CREATE TABLE identities (
  id TEXT COLLATE "C" PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL,
  project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name TEXT COLLATE "C" NOT NULL,
  variable_prefix TEXT COLLATE "C" NOT NULL,
  kind TEXT COLLATE "C" NOT NULL CHECK (kind IN ('secret', 'username_password', 'api_token', 'ssh_key')),
  description TEXT COLLATE "C",
  fields TEXT COLLATE "C" NOT NULL,
  sealed_values BYTEA NOT NULL,
  creation_time TEXT COLLATE "C" NOT NULL,
  update_time TEXT COLLATE "C" NOT NULL,
  UNIQUE (project_id, name),
  UNIQUE (project_id, variable_prefix)
);

CREATE TABLE identity_key (
  id BIGINT PRIMARY KEY CHECK (id = 1),
  fingerprint TEXT COLLATE "C" NOT NULL
);

CREATE TABLE notification_deliveries (
  id TEXT COLLATE "C" PRIMARY KEY,
  project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  pipeline_id TEXT COLLATE "C" NOT NULL REFERENCES pipelines (id) ON DELETE CASCADE,
  pipeline_status TEXT COLLATE "C" NOT NULL,
  channel TEXT COLLATE "C" NOT NULL CHECK (channel IN ('webhook', 'email')),
  target TEXT COLLATE "C" NOT NULL,
  payload TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  creation_time TEXT COLLATE "C" NOT NULL,
  next_attempt_time TEXT COLLATE "C",
  end_time TEXT COLLATE "C"
);

CREATE TABLE notification_attempts (
  delivery_id TEXT COLLATE "C" NOT NULL REFERENCES notification_deliveries (id) ON DELETE CASCADE,
  number BIGINT NOT NULL,
  start_time TEXT COLLATE "C" NOT NULL,
  duration_ms BIGINT NOT NULL,
  succeeded BIGINT NOT NULL,
  status_code BIGINT,
  error TEXT COLLATE "C",
  PRIMARY KEY (delivery_id, number)
);

CREATE TABLE notification_secrets (
  project_id TEXT COLLATE "C" PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  secret TEXT COLLATE "C" NOT NULL,
  creation_time TEXT COLLATE "C" NOT NULL
);

CREATE TABLE resource_installations (
  id TEXT COLLATE "C" PRIMARY KEY,
  project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  -- The update_time of the resources it changes.
  time TEXT COLLATE "C" NOT NULL,
  applied BIGINT NOT NULL DEFAULT 0 CHECK (applied IN (0, 1))
);

CREATE INDEX projects_by_org_id ON projects (org_id, id);
CREATE INDEX projects_by_org_name ON projects (org_id, name, id);
CREATE INDEX accounts_by_org_id ON accounts (org_id, id);
CREATE INDEX accounts_by_org_email ON accounts (org_id, email_address, id);
CREATE INDEX accounts_by_last_project ON accounts (last_project_id);
CREATE INDEX resources_by_project_id ON resources (project_id, id);
CREATE INDEX resources_by_project_name ON resources (project_id, name, id);
CREATE INDEX resources_by_project_type_id ON resources (project_id, type, id);
CREATE INDEX events_by_project_id ON events (project_id, id);
CREATE INDEX events_by_project_time ON events (project_id, event_time, id);
CREATE INDEX events_by_project_name ON events (project_id, connector, name, id);
CREATE INDEX command_executions_by_project_id ON command_executions (project_id, id);
CREATE INDEX command_executions_by_project_time ON command_executions (project_id, execution_time, id);
CREATE INDEX command_executions_by_command ON command_executions (project_id, command_id, id);
CREATE INDEX pipelines_by_project_id ON pipelines (project_id, id);
CREATE INDEX pipelines_by_project_event_time ON pipelines (project_id, event_time, id);
CREATE INDEX pipelines_by_project_creation_time ON pipelines (project_id, creation_time, id);
CREATE INDEX pipelines_by_project_status ON pipelines (project_id, status, id);
CREATE INDEX pipelines_by_event ON pipelines (event_id);
CREATE INDEX pipelines_unfinished ON pipelines (project_id, name, creation_time, id)
  WHERE status IN ('created', 'started');
CREATE INDEX tasks_by_project_id ON tasks (project_id, id);
CREATE INDEX tasks_by_project_creation_time ON tasks (project_id, creation_time, id);
CREATE INDEX tasks_by_project_status ON tasks (project_id, status, id);
CREATE INDEX tasks_by_pipeline ON tasks (pipeline_id, name, id);
CREATE INDEX tasks_by_project_pipeline ON tasks (project_id, pipeline_id, id);
CREATE INDEX task_keys_by_task ON task_keys (task_id);
-- The expressions are written as the dialect writes them (store/dialect.ts), which the
-- planner matches.
CREATE INDEX resources_triggers ON resources (
  org_id, (spec::jsonb #>> '{data,connector}'), (spec::jsonb #>> '{data,event}'), project_id
) WHERE type = 'trigger';
CREATE INDEX resources_time_triggers ON resources (id)
  WHERE type = 'trigger' AND (spec::jsonb #>> '{data,connector}') = 'time';
CREATE INDEX tasks_waiting ON tasks (not_before) WHERE status = 'created' AND not_before IS NOT NULL;
CREATE INDEX tasks_ready ON tasks (creation_time, id) WHERE status = 'created' AND blockers = 0;
CREATE INDEX tasks_unfinished ON tasks (pipeline_id) WHERE status IN ('created', 'started');
CREATE INDEX pipelines_admitted ON pipelines (project_id, name)
  WHERE concurrent = 0 AND queued = 0 AND status IN ('created', 'started');
CREATE INDEX pipelines_queued ON pipelines (project_id, name, creation_time, id) WHERE queued = 1;
CREATE INDEX pipelines_expiring ON pipelines ((epoch_days(end_time) + (spec::jsonb #>> '{data,retention}')::float8))
  WHERE status IN ('successful', 'failed', 'aborted') AND (spec::jsonb #>> '{data,retention}') IS NOT NULL;
CREATE INDEX pipelines_ended_without_retention ON pipelines (end_time, id)
  WHERE status IN ('successful', 'failed', 'aborted') AND (spec::jsonb #>> '{data,retention}') IS NULL;
CREATE INDEX events_by_creation_time ON events (creation_time, id);
CREATE INDEX command_executions_by_event ON command_executions (event_id);
CREATE INDEX pipelines_pending ON pipelines (id) WHERE pending_tasks IS NOT NULL;
CREATE INDEX step_executions_running ON step_executions (process_group) WHERE status = 'started';
CREATE INDEX pipelines_by_pipeline_resource ON pipelines (pipeline_id);
CREATE INDEX tasks_by_task_resource ON tasks (task_id);
CREATE INDEX webhook_deliveries_by_time ON webhook_deliveries (trigger_id, receipt_time);
CREATE INDEX api_keys_by_org_id ON api_keys (org_id, id);
CREATE INDEX api_keys_by_account_id ON api_keys (account_id, id);
CREATE INDEX pipelines_by_project_name ON pipelines (project_id, name, creation_time, id);
CREATE INDEX pipelines_by_project_trigger ON pipelines (project_id, trigger_id, creation_time, id)
  WHERE trigger_id IS NOT NULL;
CREATE INDEX pipelines_by_project_command ON pipelines (project_id, command_id, creation_time, id)
  WHERE command_id IS NOT NULL;
CREATE INDEX identities_by_project_id ON identities (project_id, id);
CREATE INDEX notification_deliveries_by_project ON notification_deliveries (project_id, id);
CREATE INDEX notification_deliveries_by_pipeline ON notification_deliveries (pipeline_id, id);
CREATE INDEX notification_deliveries_due ON notification_deliveries (next_attempt_time, id)
  WHERE status = 'pending';
CREATE INDEX resource_installations_by_project ON resource_installations (project_id);
CREATE INDEX resources_staged ON resources (installation) WHERE installation IS NOT NULL;

-- The change log (SQLite's migration 013): each trigger adds the row of one change. Writers are
-- serialized by the store (store/postgres.ts), so rows are committed in the order of `seq`,
-- which the change feed reads after its last one.
CREATE FUNCTION log_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  row_project TEXT;
BEGIN
  IF TG_TABLE_NAME IN ('pipelines', 'tasks', 'events') THEN
    INSERT INTO changes (project_id, kind, id) VALUES (NEW.project_id, TG_ARGV[0], NEW.id);
  ELSIF TG_TABLE_NAME IN ('step_output_chunks', 'step_executions') THEN
    SELECT project_id INTO row_project FROM tasks WHERE id = NEW.task_id;
    INSERT INTO changes (project_id, kind, id) VALUES (row_project, 'output', NEW.task_id);
  ELSIF TG_TABLE_NAME = 'projects' THEN
    INSERT INTO changes (project_id, kind, id) VALUES (OLD.id, 'project', OLD.id);
  ELSIF TG_TABLE_NAME = 'api_keys' THEN
    INSERT INTO changes (project_id, kind, id)
      SELECT NULL, 'access', org_id FROM accounts
      WHERE id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.account_id ELSE NEW.account_id END);
  ELSIF TG_TABLE_NAME = 'accounts' THEN
    INSERT INTO changes (project_id, kind, id)
      VALUES (NULL, 'access', CASE WHEN TG_OP = 'DELETE' THEN OLD.org_id ELSE NEW.org_id END);
  ELSIF TG_TABLE_NAME = 'organizations' THEN
    INSERT INTO changes (project_id, kind, id)
      VALUES (NULL, 'access', CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER changes_pipeline_created AFTER INSERT ON pipelines
  FOR EACH ROW EXECUTE FUNCTION log_change('pipeline');
CREATE TRIGGER changes_pipeline_status AFTER UPDATE OF status ON pipelines
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION log_change('pipeline');
CREATE TRIGGER changes_task_created AFTER INSERT ON tasks
  FOR EACH ROW EXECUTE FUNCTION log_change('task');
CREATE TRIGGER changes_task_status AFTER UPDATE OF status, retry, run ON tasks
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.retry IS DISTINCT FROM NEW.retry
                     OR OLD.run IS DISTINCT FROM NEW.run)
  EXECUTE FUNCTION log_change('task');
CREATE TRIGGER changes_event_created AFTER INSERT ON events
  FOR EACH ROW EXECUTE FUNCTION log_change('event');
CREATE TRIGGER changes_output_appended AFTER INSERT ON step_output_chunks
  FOR EACH ROW EXECUTE FUNCTION log_change();
CREATE TRIGGER changes_step_status AFTER UPDATE OF status ON step_executions
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION log_change();
CREATE TRIGGER changes_project_deleted AFTER DELETE ON projects
  FOR EACH ROW EXECUTE FUNCTION log_change();
CREATE TRIGGER changes_key_revoked AFTER UPDATE OF revoked ON api_keys
  FOR EACH ROW WHEN (OLD.revoked IS DISTINCT FROM NEW.revoked) EXECUTE FUNCTION log_change();
CREATE TRIGGER changes_key_deleted AFTER DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION log_change();
CREATE TRIGGER changes_account_disabled AFTER UPDATE OF disabled ON accounts
  FOR EACH ROW WHEN (OLD.disabled IS DISTINCT FROM NEW.disabled) EXECUTE FUNCTION log_change();
CREATE TRIGGER changes_account_deleted AFTER DELETE ON accounts
  FOR EACH ROW EXECUTE FUNCTION log_change();
CREATE TRIGGER changes_organization_disabled AFTER UPDATE OF disabled ON organizations
  FOR EACH ROW WHEN (OLD.disabled IS DISTINCT FROM NEW.disabled) EXECUTE FUNCTION log_change();
CREATE TRIGGER changes_organization_deleted AFTER DELETE ON organizations
  FOR EACH ROW EXECUTE FUNCTION log_change();
