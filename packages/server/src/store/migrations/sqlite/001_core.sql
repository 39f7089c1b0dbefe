-- Organizations, accounts, API keys and projects.

CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  creation_time TEXT NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0,
  address TEXT NOT NULL DEFAULT '',
  postal_code TEXT NOT NULL DEFAULT '',
  city TEXT NOT NULL DEFAULT '',
  country TEXT NOT NULL DEFAULT '',
  contact_email_address TEXT NOT NULL DEFAULT '',
  non_essential_mail_opt_in INTEGER NOT NULL DEFAULT 0,
  vat_id_number TEXT
) STRICT;

CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  UNIQUE (org_id, name)
) STRICT;
CREATE INDEX projects_by_org_id ON projects (org_id, id);
CREATE INDEX projects_by_org_name ON projects (org_id, name, id);

-- Email addresses are unique across organizations: the admin commands designate an
-- account by its address alone.
CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  creation_time TEXT NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0,
  email_address TEXT NOT NULL UNIQUE,
  name TEXT,
  role TEXT NOT NULL CHECK (role IN ('admin', 'user')),
  last_login_time TEXT,
  last_project_id TEXT REFERENCES projects (id) ON DELETE SET NULL,
  date_format TEXT NOT NULL DEFAULT 'relative' CHECK (date_format IN ('relative', 'absolute'))
) STRICT;
CREATE INDEX accounts_by_org_id ON accounts (org_id, id);
CREATE INDEX accounts_by_org_email ON accounts (org_id, email_address, id);
CREATE INDEX accounts_by_last_project ON accounts (last_project_id);

-- A key is `pwk_<id>_<secret>`: the id finds the row, the secret is only ever stored as
-- its SHA-256 hash and compared in constant time.
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  secret_hash BLOB NOT NULL,
  creation_time TEXT NOT NULL,
  revoked INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX api_keys_by_account ON api_keys (account_id);
