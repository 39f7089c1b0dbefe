-- A pipeline whose task instances are still being created, a batch at a time
-- (services/instantiation.ts): the task resources it was made with, by name, until its last
-- task exists. Its tasks are held meanwhile, so none runs before all exist.
ALTER TABLE pipelines ADD COLUMN pending_tasks TEXT;
CREATE INDEX pipelines_pending ON pipelines (id) WHERE pending_tasks IS NOT NULL;
