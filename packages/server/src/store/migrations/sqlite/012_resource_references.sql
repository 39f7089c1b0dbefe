-- Deleting a resource sets the references of pipelines and tasks made from it to NULL
-- (ON DELETE SET NULL). Without an index on those columns, each deleted resource made SQLite
-- scan every pipeline and task of the database, of every organization: an install that
-- deletes a few hundred resources held the server for seconds on a large database.
CREATE INDEX pipelines_by_pipeline_resource ON pipelines (pipeline_id);
CREATE INDEX tasks_by_task_resource ON tasks (task_id);
