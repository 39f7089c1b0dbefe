-- The identities of projects: credentials given to the steps of the tasks naming them. Their
-- values are sealed (AES-256-GCM, see domain/secret-box.ts) under a key the server keeps out of
-- the database; the row holds in clear only what reads show: name, kind, the members held.
-- `variable_prefix` starts the names of its variables: two identities of a project may not
-- share one. Deleting the project deletes its identities.

CREATE TABLE identities (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  variable_prefix TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('secret', 'username_password', 'api_token', 'ssh_key')),
  description TEXT,
  fields TEXT NOT NULL CHECK (json_valid(fields)),
  sealed_values BLOB NOT NULL,
  creation_time TEXT NOT NULL,
  update_time TEXT NOT NULL,
  UNIQUE (project_id, name),
  UNIQUE (project_id, variable_prefix)
) STRICT;
CREATE INDEX identities_by_project_id ON identities (project_id, id);

-- The fingerprint of the key that sealed the identities (an HMAC of a constant under it, which
-- tells nothing of the key): a server started with another key refuses to start rather than
-- fail every task naming an identity. One row, written at the first start with a key.

CREATE TABLE identity_key (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  fingerprint TEXT NOT NULL
) STRICT;
