-- Scheduling work that does not grow with a pipeline or a queue. A task waiting to run keeps
-- the count of what holds it (`blockers`): the instances of the entries it depends on that have
-- not ended in a way that lets it run, plus one while its pipeline waits behind another of the
-- same non-concurrent pipeline resource. Ending a task decrements its dependents, found by
-- name (`dependents`); the next task to run is the oldest one that nothing holds, read from an
-- index of those alone.
ALTER TABLE tasks ADD COLUMN blockers INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN dependents TEXT NOT NULL DEFAULT '[]';
-- A pipeline of a non-concurrent resource waiting for the unfinished one of its name to end.
ALTER TABLE pipelines ADD COLUMN queued INTEGER NOT NULL DEFAULT 0;

CREATE TEMP TABLE dependency_edges AS
  SELECT DISTINCT t.pipeline_id, d.value AS name, t.name AS dependent
  FROM tasks t, json_each(t.dependencies) d;
CREATE INDEX temp.dependency_edges_by_name ON dependency_edges (pipeline_id, name);
UPDATE tasks SET dependents = (
  SELECT json_group_array(dependent) FROM (
    SELECT DISTINCT e.dependent FROM dependency_edges e
    WHERE e.pipeline_id = tasks.pipeline_id AND e.name = tasks.name))
WHERE EXISTS (SELECT 1 FROM dependency_edges e WHERE e.pipeline_id = tasks.pipeline_id AND e.name = tasks.name);
DROP TABLE temp.dependency_edges;

-- As the scheduler decided until now: behind an older unfinished pipeline of the same name.
UPDATE pipelines SET queued = 1
WHERE concurrent = 0 AND status IN ('created', 'started') AND EXISTS (
  SELECT 1 FROM pipelines q
  WHERE q.project_id = pipelines.project_id AND q.name = pipelines.name AND q.status IN ('created', 'started')
    AND (q.creation_time, q.id) < (pipelines.creation_time, pipelines.id));

UPDATE tasks SET blockers = (
    SELECT count(*) FROM json_each(tasks.dependencies) d
    JOIN tasks u ON u.pipeline_id = tasks.pipeline_id AND u.name = d.value
    WHERE NOT (u.status = 'successful'
               OR (u.status = 'failed' AND json_extract(u.pipeline_task, '$.on_failure') = 'continue')))
  + (SELECT queued FROM pipelines p WHERE p.id = tasks.pipeline_id)
WHERE status = 'created';

DROP INDEX tasks_created_in_order;
-- Tasks nothing holds, oldest first: what the scheduler claims from.
CREATE INDEX tasks_ready ON tasks (creation_time, id) WHERE status = 'created' AND blockers = 0;
-- Whether a pipeline has anything left to run, without reading its finished tasks.
DROP INDEX tasks_running;
CREATE INDEX tasks_unfinished ON tasks (pipeline_id) WHERE status IN ('created', 'started');
-- The unfinished pipeline of a non-concurrent resource that is not waiting (at most one a name).
CREATE INDEX pipelines_admitted ON pipelines (project_id, name)
  WHERE concurrent = 0 AND queued = 0 AND status IN ('created', 'started');
-- The queue of each non-concurrent resource, oldest first.
CREATE INDEX pipelines_queued ON pipelines (project_id, name, creation_time, id) WHERE queued = 1;
