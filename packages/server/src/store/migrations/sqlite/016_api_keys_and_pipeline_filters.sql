-- The API manages keys (#25): a key gets a name saying what it is for and the time it was
-- revoked, and the organization of its account, so that the keys of an organization are
-- listed by keyset over one index. An account never changes organization.
ALTER TABLE api_keys ADD COLUMN org_id TEXT REFERENCES organizations (id) ON DELETE CASCADE;
ALTER TABLE api_keys ADD COLUMN name TEXT;
ALTER TABLE api_keys ADD COLUMN revocation_time TEXT;
UPDATE api_keys SET org_id = (SELECT org_id FROM accounts WHERE accounts.id = api_keys.account_id);
CREATE INDEX api_keys_by_org_id ON api_keys (org_id, id);
CREATE INDEX api_keys_by_account_id ON api_keys (account_id, id);
DROP INDEX api_keys_by_account;

-- The filters of GET /pipelines by name, trigger and command, each with the creation time
-- after it: a filter alone, or with a period of creation, sorted by creation_time, reads only
-- the rows it returns. Most pipelines have no trigger or no command: those are not indexed.
CREATE INDEX pipelines_by_project_name ON pipelines (project_id, name, creation_time, id);
CREATE INDEX pipelines_by_project_trigger ON pipelines (project_id, trigger_id, creation_time, id)
  WHERE trigger_id IS NOT NULL;
CREATE INDEX pipelines_by_project_command ON pipelines (project_id, command_id, creation_time, id)
  WHERE command_id IS NOT NULL;
