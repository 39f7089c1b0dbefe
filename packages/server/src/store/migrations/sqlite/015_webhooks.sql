-- The webhook of each trigger of connector `webhook`, made when it is first read: the
-- identifier in its URL and the secret that signs its deliveries. A delivery finds its webhook
-- by the SHA-256 of the identifier, so that the time a lookup takes tells nothing of the
-- identifiers stored. The secret is kept as it is: checking an HMAC needs it. Deleting the
-- trigger deletes its webhook; reinstalling it keeps it (the resource keeps its id).

CREATE TABLE webhooks (
  trigger_id TEXT PRIMARY KEY REFERENCES resources (id) ON DELETE CASCADE,
  hook_id TEXT NOT NULL,
  hook_digest BLOB NOT NULL UNIQUE,
  secret TEXT,
  secret_update_time TEXT
) STRICT, WITHOUT ROWID;

-- The deliveries a webhook received within the replay window, each by its fingerprints (the
-- hash of its body, and of its identifier when the sender gives one): the same one again within
-- the window is refused. Expired rows are deleted a few at a time as deliveries come.

CREATE TABLE webhook_deliveries (
  trigger_id TEXT NOT NULL REFERENCES webhooks (trigger_id) ON DELETE CASCADE,
  fingerprint TEXT NOT NULL,
  receipt_time TEXT NOT NULL,
  PRIMARY KEY (trigger_id, fingerprint)
) STRICT, WITHOUT ROWID;

CREATE INDEX webhook_deliveries_by_time ON webhook_deliveries (trigger_id, receipt_time);
