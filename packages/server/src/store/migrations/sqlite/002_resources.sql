-- Resources: the triggers, commands, pipelines and tasks installed in a project, each
-- with its spec kept exactly as installed (JSON text).

CREATE TABLE resources (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  type TEXT NOT NULL CHECK (type IN ('trigger', 'command', 'pipeline', 'task')),
  name TEXT NOT NULL,
  creation_time TEXT NOT NULL,
  update_time TEXT NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
  spec TEXT NOT NULL CHECK (json_valid(spec)),
  UNIQUE (project_id, type, name)
) STRICT;
-- One index per keyset sort, ending in the id tie-breaker, with and without the type
-- filter. Within a type names are unique, so the UNIQUE index serves the name sort there.
CREATE INDEX resources_by_project_id ON resources (project_id, id);
CREATE INDEX resources_by_project_name ON resources (project_id, name, id);
CREATE INDEX resources_by_project_type_id ON resources (project_id, type, id);
