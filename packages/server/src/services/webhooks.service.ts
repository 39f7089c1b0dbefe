import type { Schemas } from '@pipewright/types';
import { DomainError } from '../domain/errors.js';
import { filtersMatch } from '../domain/events/trigger-filters.js';
import {
  deliveryFingerprints,
  deliveryKind,
  proofProblem,
  REPLAY_WINDOW_MS,
  type WebhookDelivery,
} from '../domain/events/webhook-deliveries.js';
import { hashSecret, makeSecret } from '../domain/secrets/api-keys.js';
import { formatTime } from '../domain/time.js';
import type { Store, Tables, WebhookRecord } from '../store/index.js';
import type { EventIntake } from './intake/event-intake.js';

type Project = Schemas['Project'];
type TriggerSpec = Extract<Schemas['ResourceSpec'], { type: 'trigger' }>;
type WebhookTriggerData = Extract<TriggerSpec['data'], { connector: 'webhook' }>;
/** The webhook of a trigger, but its path: where the API is served is http's to say. */
type Webhook = Omit<Schemas['TriggerWebhook'], 'path'>;

const describe = (record: WebhookRecord): Webhook => ({
  trigger_id: record.trigger_id,
  hook_id: record.hook_id,
  secret_set: record.secret !== null,
  ...(record.secret_update_time === null ? {} : { secret_update_time: record.secret_update_time }),
});

const unknownWebhook = (message: string, data?: Record<string, unknown>) =>
  new DomainError('unknown_webhook', message, data);

/** The trigger's spec when it is a trigger of connector `webhook`. */
function webhookSpec(resource: Schemas['Resource'] | undefined) {
  const spec = resource?.spec;
  return spec?.type === 'trigger' && spec.data.connector === 'webhook'
    ? (spec as TriggerSpec & { data: WebhookTriggerData })
    : undefined;
}

/**
 * The webhooks of triggers of connector `webhook`: their URLs and secrets, and the deliveries
 * posted to them, which become events through the event intake as custom events do.
 */
export function createWebhookService(store: Store, intake: EventIntake, clock: () => Date) {
  /** The trigger's webhook, made in the transaction `tx` if it has none yet. */
  const webhookOf = async (tx: Tables, project: Project, triggerId: string): Promise<WebhookRecord> => {
    if (!webhookSpec(await tx.resources.get(project.id, triggerId))) {
      throw unknownWebhook(`no trigger of connector webhook has the id ${triggerId}`, { id: triggerId });
    }
    const existing = await tx.webhooks.ofTrigger(triggerId);
    if (existing) return existing;
    const hookId = makeSecret();
    await tx.webhooks.insert(triggerId, hookId, hashSecret(hookId));
    return { trigger_id: triggerId, hook_id: hookId, secret: null, secret_update_time: null };
  };

  return {
    /** The trigger's webhook; the first read makes it. */
    async get(project: Project, triggerId: string): Promise<Webhook> {
      return describe(await store.transaction((tx) => webhookOf(tx, project, triggerId)));
    },

    /** Gives the trigger's webhook a new identifier: the old one is unknown from then on. */
    async renew(project: Project, triggerId: string): Promise<Webhook> {
      return store.transaction(async (tx) => {
        const webhook = await webhookOf(tx, project, triggerId);
        const hookId = makeSecret();
        await tx.webhooks.renew(triggerId, hookId, hashSecret(hookId));
        return describe({ ...webhook, hook_id: hookId });
      });
    },

    async setSecret(project: Project, triggerId: string, secret: string): Promise<Webhook> {
      return store.transaction(async (tx) => {
        const webhook = await webhookOf(tx, project, triggerId);
        const time = formatTime(clock());
        await tx.webhooks.setSecret(triggerId, secret, time);
        return describe({ ...webhook, secret, secret_update_time: time });
      });
    },

    async deleteSecret(project: Project, triggerId: string): Promise<void> {
      await store.transaction(async (tx) => {
        await webhookOf(tx, project, triggerId);
        await tx.webhooks.setSecret(triggerId, null, null);
      });
    },

    /**
     * A delivery posted to the webhook `hookId`: checked (the webhook exists, the delivery is
     * signed with its secret when the trigger wants it, it is not a replay), recorded, and, when
     * the trigger accepts it, stored as an event of connector `webhook` that starts the
     * trigger's pipelines.
     */
    async receive(hookId: string, delivery: WebhookDelivery): Promise<Schemas['TriggerWebhookDelivery']> {
      const digest = hashSecret(hookId);
      const target = await store.webhooks.byDigest(digest);
      const resource = target && (await store.resources.get(target.project_id, target.trigger_id));
      const spec = webhookSpec(resource);
      if (!target || !resource || !spec || target.org_disabled) {
        throw unknownWebhook('no webhook has this identifier');
      }
      const { sender = 'generic', signed = true } = spec.data.parameters ?? {};
      if (signed) {
        if (target.secret === null) {
          throw new DomainError(
            'webhook_secret_not_set',
            'the webhook requires signed deliveries and its secret is not set: set it with PUT /triggers/id/{id}/webhook/secret',
          );
        }
        const problem = proofProblem(sender, target.secret, delivery);
        if (problem) {
          const message = problem.missing
            ? `the delivery has no ${problem.header} header, which must prove it comes from the webhook's sender`
            : `the ${problem.header} header does not match the webhook's secret`;
          throw new DomainError('invalid_webhook_signature', message, { header: problem.header });
        }
      }

      const { event } = spec.data;
      const kind = deliveryKind(sender, delivery, event);
      const refusal = resource.disabled
        ? 'the trigger is disabled'
        : kind !== event
          ? `the trigger listens to ${event} deliveries, not ${kind ?? 'deliveries of no kind'}`
          : !filtersMatch(spec.data.filters, delivery.data)
            ? "the trigger's filters do not hold for this delivery"
            : undefined;
      const now = clock();
      const fired = await intake.receive(
        target.org_id,
        { connector: 'webhook', name: event, data: delivery.data },
        refusal === undefined
          ? [{ ref: { project_id: target.project_id, id: target.trigger_id }, data: spec.data }]
          : [],
        async (tx) => {
          // Weighed again in the transaction that records it: the webhook may have been renewed
          // or deleted meanwhile, and the same delivery may have come twice at once.
          if ((await tx.webhooks.byDigest(digest))?.trigger_id !== target.trigger_id) {
            throw unknownWebhook('no webhook has this identifier');
          }
          const recorded = await tx.webhooks.recordDelivery(
            target.trigger_id,
            deliveryFingerprints(sender, delivery),
            formatTime(now),
            formatTime(new Date(now.getTime() - REPLAY_WINDOW_MS)),
          );
          if (!recorded) {
            throw new DomainError(
              'duplicate_webhook_delivery',
              'this delivery (the same identifier or body) was received less than 24 hours ago',
            );
          }
        },
      );
      const [first] = fired;
      if (first) return { accepted: true, event_id: first.event.id, pipeline_ids: first.pipelineIds };
      return {
        accepted: false,
        pipeline_ids: [],
        reason: refusal ?? 'the trigger changed while the delivery was received',
      };
    },
  };
}
