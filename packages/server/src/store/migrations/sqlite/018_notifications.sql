-- Notifications of pipelines' ends (services/notifications-queue.ts, scheduler/notifier.ts).
--
-- One row per webhook or email that a pipeline's end matched, stored in the transaction that
-- ends the pipeline, so that no end is notified twice or lost. The notifier claims due rows by
-- moving `next_attempt_time` past the time an attempt may take (a lease), sends them, then
-- records the attempt and the next time (or the end) in one transaction: after a crash, a
-- pending delivery is sent again at its next time, one claimed during the crash when its lease
-- ends. `target` is the webhook ({"url"}) or email ({"to"}) of the spec; `payload` what the
-- notification says, made when the pipeline ended.
CREATE TABLE notification_deliveries (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  pipeline_id TEXT NOT NULL REFERENCES pipelines (id) ON DELETE CASCADE,
  pipeline_status TEXT NOT NULL,
  channel TEXT NOT NULL CHECK (channel IN ('webhook', 'email')),
  target TEXT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  creation_time TEXT NOT NULL,
  next_attempt_time TEXT,
  end_time TEXT
) STRICT;

CREATE INDEX notification_deliveries_by_project ON notification_deliveries (project_id, id);
CREATE INDEX notification_deliveries_by_pipeline ON notification_deliveries (pipeline_id, id);
-- What the notifier polls: only pending rows, by when they are due.
CREATE INDEX notification_deliveries_due ON notification_deliveries (next_attempt_time, id)
  WHERE status = 'pending';

-- Every attempt of a delivery, as the API shows it.
CREATE TABLE notification_attempts (
  delivery_id TEXT NOT NULL REFERENCES notification_deliveries (id) ON DELETE CASCADE,
  number INTEGER NOT NULL,
  start_time TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  succeeded INTEGER NOT NULL,
  status_code INTEGER,
  error TEXT,
  PRIMARY KEY (delivery_id, number)
) STRICT, WITHOUT ROWID;

-- The secret that signs a project's webhook notifications, made by POST /notification_secret
-- and shown only then. Kept as it is: an HMAC needs it.
CREATE TABLE notification_secrets (
  project_id TEXT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  secret TEXT NOT NULL,
  creation_time TEXT NOT NULL
) STRICT, WITHOUT ROWID;
