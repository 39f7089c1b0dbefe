import type { QueryBuilder } from './dialect.js';
import type { Executor } from './sql.js';

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
export function createWebhookStore(q: QueryBuilder, x: Executor) {
  return {
    ofTrigger(triggerId: string): Promise<WebhookRecord | undefined> {
      return x.first(
        q
          .selectFrom('webhooks')
          .select(['trigger_id', 'hook_id', 'secret', 'secret_update_time'])
          .where('trigger_id', '=', triggerId),
      );
    },
    /** The webhook whose identifier has this SHA-256, with its trigger's organization and project. */
    async byDigest(digest: Buffer): Promise<WebhookTarget | undefined> {
      const row = await x.first(
        q
          .selectFrom('webhooks as w')
          .innerJoin('resources as r', 'r.id', 'w.trigger_id')
          .innerJoin('organizations as o', 'o.id', 'r.org_id')
          .select([
            'w.trigger_id',
            'w.hook_id',
            'w.secret',
            'w.secret_update_time',
            'r.org_id',
            'r.project_id',
            'o.disabled as org_disabled',
          ])
          .where('w.hook_digest', '=', digest),
      );
      return row && { ...row, org_disabled: row.org_disabled === 1 };
    },
    async insert(triggerId: string, hookId: string, digest: Buffer): Promise<void> {
      await x.run(
        q.insertInto('webhooks').values({ trigger_id: triggerId, hook_id: hookId, hook_digest: digest }),
      );
    },
    async renew(triggerId: string, hookId: string, digest: Buffer): Promise<void> {
      await x.run(
        q
          .updateTable('webhooks')
          .set({ hook_id: hookId, hook_digest: digest })
          .where('trigger_id', '=', triggerId),
      );
    },
    /** Sets the secret, or forgets it with null. */
    async setSecret(triggerId: string, secret: string | null, time: string | null): Promise<void> {
      await x.run(
        q
          .updateTable('webhooks')
          .set({ secret, secret_update_time: time })
          .where('trigger_id', '=', triggerId),
      );
    },
    /**
     * Records a delivery by its fingerprints at `time`, unless one of them was recorded at
     * `since` or later: then it records nothing and returns false. Deletes a batch of the
     * webhook's deliveries older than `since` too.
     */
    async recordDelivery(
      triggerId: string,
      fingerprints: readonly string[],
      time: string,
      since: string,
    ): Promise<boolean> {
      for (const fingerprint of fingerprints) {
        const seen = await x.first(
          q
            .selectFrom('webhook_deliveries')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('trigger_id', '=', triggerId)
            .where('fingerprint', '=', fingerprint)
            .where('receipt_time', '>=', since),
        );
        if ((seen?.n ?? 0) > 0) return false;
      }
      await x.run(
        q
          .deleteFrom('webhook_deliveries')
          .where('trigger_id', '=', triggerId)
          .where('fingerprint', 'in', (eb) =>
            eb
              .selectFrom('webhook_deliveries')
              .select('fingerprint')
              .where('trigger_id', '=', triggerId)
              .where('receipt_time', '<', since)
              .limit(EXPIRED_BATCH),
          ),
      );
      for (const fingerprint of fingerprints) {
        await x.run(
          q
            .insertInto('webhook_deliveries')
            .values({ trigger_id: triggerId, fingerprint, receipt_time: time })
            .onConflict((oc) =>
              oc.columns(['trigger_id', 'fingerprint']).doUpdateSet((eb) => ({
                receipt_time: eb.ref('excluded.receipt_time'),
              })),
            ),
        );
      }
      return true;
    },
  };
}
