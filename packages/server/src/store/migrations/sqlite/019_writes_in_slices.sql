-- Large writes done a slice at a time, each slice a transaction of its own, so that the
-- server's one thread answers other requests between them, with what readers see changing at
-- once, in one small transaction.

-- Tasks. A pipeline whose tasks are created a batch at a time (migration 010) keeps them held
-- until all exist, then releases them a slice at a time (services/instantiation.ts), in the
-- order of their ids, each counted afresh: releasing 10,000 at once held the thread too long.
-- The largest id released so far; the tasks after it are still held by their creation. It goes
-- back to NULL with `pending_tasks` once the last slice is released. A crash carries on from it.
ALTER TABLE pipelines ADD COLUMN released_through TEXT;

-- Resources. An installation (services/resources.service.ts) writes its changes to resources
-- other than triggers hidden, a slice at a time: new rows, and the new spec or the deletion of
-- existing ones, marked with the installation. Its commit is one small transaction, which
-- writes its triggers (read by other queries than those of store/resources.store.ts, which
-- alone know of the marks) and makes it `applied`: from then on readers see the marked rows
-- changed, and the marks are folded into the rows a slice at a time. An installation that
-- fails or is cut short by a crash before it is applied is undone the same way; the next
-- installation of the project finishes what a crash left.
CREATE TABLE resource_installations (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  -- The update_time of the resources it changes.
  time TEXT NOT NULL,
  applied INTEGER NOT NULL DEFAULT 0 CHECK (applied IN (0, 1))
) STRICT;
CREATE INDEX resource_installations_by_project ON resource_installations (project_id);

ALTER TABLE resources ADD COLUMN installation TEXT;
ALTER TABLE resources ADD COLUMN staged TEXT CHECK (staged IN ('create', 'update', 'delete'));
ALTER TABLE resources ADD COLUMN staged_spec TEXT CHECK (json_valid(staged_spec));
CREATE INDEX resources_staged ON resources (installation) WHERE installation IS NOT NULL;
