import type { Db } from './db.js';

/** The webhook of a trigger, as stored. */
export interface WebhookRecord {
  trigger_id: string;
  hook_id: string;
  /** Null while no secret is set. */
  secret: string | null;
  secret_update_time: string | null;
}

/** The webhook a delivery is posted to, and where its trigger is. */
export interface WebhookTarget extends WebhookRecord {
  org_id: string;
  project_id: string;
  /** The trigger's organization is disabled. */
  org_disabled: boolean;
}

/** Expired deliveries deleted per delivery received: more than one, so that a backlog drains. */
const EXPIRED_BATCH = 100;

/** The webhooks of triggers, and the deliveries each received within the replay window. */
export function createWebhookStore(db: Db) {
  const ofTrigger = db.prepare<[string], WebhookRecord>(
    'SELECT trigger_id, hook_id, secret, secret_update_time FROM webhooks WHERE trigger_id = ?',
  );
  const byDigest = db.prepare<[Buffer], Omit<WebhookTarget, 'org_disabled'> & { org_disabled: number }>(
    `SELECT w.trigger_id, w.hook_id, w.secret, w.secret_update_time, r.org_id, r.project_id,
            o.disabled AS org_disabled
     FROM webhooks w JOIN resources r ON r.id = w.trigger_id JOIN organizations o ON o.id = r.org_id
     WHERE w.hook_digest = ?`,
  );
  const insert = db.prepare<[string, string, Buffer]>(
    'INSERT INTO webhooks (trigger_id, hook_id, hook_digest) VALUES (?, ?, ?)',
  );
  const renew = db.prepare<[string, Buffer, string]>(
    'UPDATE webhooks SET hook_id = ?, hook_digest = ? WHERE trigger_id = ?',
  );
  const setSecret = db.prepare<[string | null, string | null, string]>(
    'UPDATE webhooks SET secret = ?, secret_update_time = ? WHERE trigger_id = ?',
  );
  const seen = db.prepare<[string, string, string], { n: number }>(
    `SELECT count(*) AS n FROM webhook_deliveries
     WHERE trigger_id = ? AND fingerprint = ? AND receipt_time >= ?`,
  );
  const record = db.prepare<[string, string, string]>(
    `INSERT INTO webhook_deliveries (trigger_id, fingerprint, receipt_time) VALUES (?, ?, ?)
     ON CONFLICT (trigger_id, fingerprint) DO UPDATE SET receipt_time = excluded.receipt_time`,
  );
  const expire = db.prepare<[string, string, string, number]>(
    `DELETE FROM webhook_deliveries WHERE trigger_id = ? AND fingerprint IN (
       SELECT fingerprint FROM webhook_deliveries WHERE trigger_id = ? AND receipt_time < ? LIMIT ?)`,
  );
  return {
    ofTrigger(triggerId: string): WebhookRecord | undefined {
      return ofTrigger.get(triggerId);
    },
    /** The webhook whose identifier has this SHA-256, with its trigger's organization and project. */
    byDigest(digest: Buffer): WebhookTarget | undefined {
      const row = byDigest.get(digest);
      return row && { ...row, org_disabled: row.org_disabled === 1 };
    },
    insert(triggerId: string, hookId: string, digest: Buffer): void {
      insert.run(triggerId, hookId, digest);
    },
    renew(triggerId: string, hookId: string, digest: Buffer): void {
      renew.run(hookId, digest, triggerId);
    },
    /** Sets the secret, or forgets it with null. */
    setSecret(triggerId: string, secret: string | null, time: string | null): void {
      setSecret.run(secret, time, triggerId);
    },
    /**
     * Records a delivery by its fingerprints at `time`, unless one of them was recorded at
     * `since` or later: then it records nothing and returns false. Deletes a batch of the
     * webhook's deliveries older than `since` too.
     */
    recordDelivery(triggerId: string, fingerprints: readonly string[], time: string, since: string): boolean {
      if (fingerprints.some((fingerprint) => (seen.get(triggerId, fingerprint, since)?.n ?? 0) > 0)) {
        return false;
      }
      expire.run(triggerId, triggerId, since, EXPIRED_BATCH);
      for (const fingerprint of fingerprints) record.run(triggerId, fingerprint, time);
      return true;
    },
  };
}
