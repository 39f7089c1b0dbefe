-- The change log: what the streams of the API (GET /changes, GET /tasks/id/{id}/output) read.
-- Triggers append a row for every change a stream shows, in the transaction that makes the
-- change, whichever connection writes it (the API's, the scheduler's, an admin command's, another
-- server's later): a change is in the log exactly when it is committed, in commit order.
--
-- `seq` is the rowid: each insert takes the largest plus one, and commits are serialized, so
-- committed rows are numbered without gaps in the order of their commits, and a reader that saw
-- rows up to N finds every later change above N. Retention (store/changes.store.ts) keeps the
-- latest rows, by number, never fewer than one, so a number is never given twice. A row says what
-- changed, not how: a stream reads the object as it is when it sends it. Rows are kept by number,
-- not by time: a row is as small as can be, on the scheduler's hottest path.
CREATE TABLE changes (
  seq INTEGER PRIMARY KEY,
  -- NULL for changes of access (`access`), which concern an organization.
  project_id TEXT,
  -- pipeline, task, event: that object (created, or its status changed); output: the task
  -- `id` printed, or a step of it ended; project: the project was deleted; access:
  -- a key, account or the organization `id` was revoked, disabled or deleted.
  kind TEXT NOT NULL,
  id TEXT NOT NULL
) STRICT;

CREATE TRIGGER changes_pipeline_created AFTER INSERT ON pipelines BEGIN
  INSERT INTO changes (project_id, kind, id)
  VALUES (NEW.project_id, 'pipeline', NEW.id);
END;
CREATE TRIGGER changes_pipeline_status AFTER UPDATE OF status ON pipelines
WHEN OLD.status IS NOT NEW.status BEGIN
  INSERT INTO changes (project_id, kind, id)
  VALUES (NEW.project_id, 'pipeline', NEW.id);
END;

-- A task changes for its stream when its status, attempt or run does (not its blockers, which
-- the scheduler counts down often).
CREATE TRIGGER changes_task_created AFTER INSERT ON tasks BEGIN
  INSERT INTO changes (project_id, kind, id)
  VALUES (NEW.project_id, 'task', NEW.id);
END;
CREATE TRIGGER changes_task_status AFTER UPDATE OF status, retry, run ON tasks
WHEN OLD.status IS NOT NEW.status OR OLD.retry IS NOT NEW.retry OR OLD.run IS NOT NEW.run BEGIN
  INSERT INTO changes (project_id, kind, id)
  VALUES (NEW.project_id, 'task', NEW.id);
END;

CREATE TRIGGER changes_event_created AFTER INSERT ON events BEGIN
  INSERT INTO changes (project_id, kind, id)
  VALUES (NEW.project_id, 'event', NEW.id);
END;

-- Output: a chunk appended, or a step execution ended (a step of an aborted task may end after
-- its task: its output stream ends only then). A step's start changes nothing a stream shows, and
-- is left out: it is a row per step of the scheduler's hottest path.
CREATE TRIGGER changes_output_appended AFTER INSERT ON step_output_chunks BEGIN
  INSERT INTO changes (project_id, kind, id)
  VALUES ((SELECT project_id FROM tasks WHERE id = NEW.task_id), 'output', NEW.task_id);
END;
CREATE TRIGGER changes_step_status AFTER UPDATE OF status ON step_executions
WHEN OLD.status IS NOT NEW.status BEGIN
  INSERT INTO changes (project_id, kind, id)
  VALUES ((SELECT project_id FROM tasks WHERE id = NEW.task_id), 'output', NEW.task_id);
END;

-- What ends streams: the project deleted; a key revoked or deleted, an account or organization
-- disabled or deleted (the streams of that organization then check their key again).
CREATE TRIGGER changes_project_deleted AFTER DELETE ON projects BEGIN
  INSERT INTO changes (project_id, kind, id)
  VALUES (OLD.id, 'project', OLD.id);
END;
CREATE TRIGGER changes_key_revoked AFTER UPDATE OF revoked ON api_keys
WHEN OLD.revoked IS NOT NEW.revoked BEGIN
  INSERT INTO changes (project_id, kind, id)
  SELECT NULL, 'access', org_id FROM accounts WHERE id = NEW.account_id;
END;
CREATE TRIGGER changes_key_deleted AFTER DELETE ON api_keys BEGIN
  INSERT INTO changes (project_id, kind, id)
  SELECT NULL, 'access', org_id FROM accounts WHERE id = OLD.account_id;
END;
CREATE TRIGGER changes_account_disabled AFTER UPDATE OF disabled ON accounts
WHEN OLD.disabled IS NOT NEW.disabled BEGIN
  INSERT INTO changes (project_id, kind, id)
  VALUES (NULL, 'access', NEW.org_id);
END;
CREATE TRIGGER changes_account_deleted AFTER DELETE ON accounts BEGIN
  INSERT INTO changes (project_id, kind, id)
  VALUES (NULL, 'access', OLD.org_id);
END;
CREATE TRIGGER changes_organization_disabled AFTER UPDATE OF disabled ON organizations
WHEN OLD.disabled IS NOT NEW.disabled BEGIN
  INSERT INTO changes (project_id, kind, id)
  VALUES (NULL, 'access', NEW.id);
END;
CREATE TRIGGER changes_organization_deleted AFTER DELETE ON organizations BEGIN
  INSERT INTO changes (project_id, kind, id)
  VALUES (NULL, 'access', OLD.id);
END;
