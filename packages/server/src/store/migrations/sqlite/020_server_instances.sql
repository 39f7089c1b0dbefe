-- Several servers on one database (PostgreSQL; a SQLite file has one server): each server is
-- an instance, whose lease is its row here. It renews the lease while it lives; the tasks it
-- claims name it, and whoever finds its lease expired ends their attempts, which retries them
-- as a restart does (scheduler/instance-lease.ts).
CREATE TABLE server_instances (
  id TEXT PRIMARY KEY,
  -- Milliseconds since the epoch by the database's clock, which every server reads alike.
  expires_at INTEGER NOT NULL
) STRICT;

-- The instance that claimed the task; it means something only while the task is started.
ALTER TABLE tasks ADD COLUMN server_instance TEXT;
-- The started tasks, by instance: what a lease's expiry leaves to end, without a scan of all tasks.
CREATE INDEX tasks_started ON tasks (server_instance) WHERE status = 'started';
