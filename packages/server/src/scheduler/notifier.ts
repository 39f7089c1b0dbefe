import {
  DEFAULT_RETRY_POLICY,
  type NotificationPayload,
  type RetryPolicy,
} from '../domain/execution/notifications.js';
import type { SecretBox } from '../domain/secrets/secret-box.js';
import type { Logger } from '../logger.js';
import {
  type AttemptResult,
  claimDueNotifications,
  recordNotificationAttempt,
  revealIdentities,
} from '../services/index.js';
import type { ClaimedNotificationDelivery, Store } from '../store/index.js';
import { createEmailSender, NO_EMAIL, postWebhook, type SmtpOptions } from './notification-senders.js';

export type { SmtpOptions } from './notification-senders.js';

export interface NotifierOptions extends Partial<RetryPolicy> {
  /** The server's identity key: it opens the identities whose values sign webhooks. */
  secrets: SecretBox;
  /** The SMTP server of emails; without one, email notifications fail, saying so. */
  smtp?: SmtpOptions | undefined;
  /** How long one attempt may take (default 10 s, as the spec says). */
  attemptTimeoutMs?: number;
  /** Attempts under way at once, at most (default 8). */
  concurrency?: number;
  /** How often due deliveries are looked for (default 1 s). */
  pollIntervalMs?: number;
  /** How long a claimed delivery is held before another claim may take it (default 60 s, as the spec says). */
  leaseMs?: number;
}

export interface Notifier {
  /** Looks for due deliveries every `pollIntervalMs`, and as soon as an attempt ends. */
  start(): void;
  /** Claims no more, and resolves once the attempts under way are recorded. */
  stop(): Promise<void>;
}

/**
 * The worker loop that sends notifications: claims due deliveries (services/notifications/queue.ts)
 * up to its concurrency, sends each outside any transaction, within its timeout, and records
 * the attempt. Nothing it does waits on a request or the scheduler, nor they on it.
 */
export function createNotifier(
  store: Store,
  options: NotifierOptions,
  logger: Logger,
  clock: () => Date = () => new Date(),
): Notifier {
  const policy: RetryPolicy = {
    maxAttempts: options.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts,
    firstRetryDelayMs: options.firstRetryDelayMs ?? DEFAULT_RETRY_POLICY.firstRetryDelayMs,
  };
  const timeoutMs = options.attemptTimeoutMs ?? 10_000;
  const concurrency = options.concurrency ?? 8;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const leaseMs = options.leaseMs ?? 60_000;
  const sendEmail = options.smtp ? createEmailSender(options.smtp, timeoutMs) : NO_EMAIL;
  const underWay = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  // A pass claims with its room counted at its start: two at once would claim too much.
  let passing = false;
  let passAgain = false;

  /**
   * The value that signs a webhook's posts: its identity's, read at each attempt (it may have
   * been created or changed since the last one), or why there is none.
   */
  const signingKey = async (
    projectId: string,
    payload: NotificationPayload,
    name: string,
  ): Promise<{ key: string } | { problem: string }> => {
    const project = await store.projects.get(payload.pipeline.org_id, projectId);
    if (!project || !(await store.identities.getByName(projectId, name))) {
      return { problem: `the webhook names identity "${name}", which the project does not have` };
    }
    const revealed = await revealIdentities(store, options.secrets, project, [name]);
    if ('problem' in revealed) return revealed;
    const [identity] = revealed.identities;
    const key = identity?.values.value ?? identity?.values.token;
    return key === undefined
      ? {
          problem: `identity "${name}" is of kind ${identity?.kind}: a webhook is signed by a secret or an api_token`,
        }
      : { key };
  };

  const send = async (delivery: ClaimedNotificationDelivery): Promise<AttemptResult> => {
    const payload = JSON.parse(delivery.payload) as NotificationPayload;
    if ('webhook' in delivery.target && delivery.target.webhook) {
      const { url, identity } = delivery.target.webhook;
      const signing =
        identity === undefined ? undefined : await signingKey(delivery.project_id, payload, identity);
      if (signing && 'problem' in signing) return { succeeded: false, error: signing.problem };
      return postWebhook(url, delivery.payload, delivery.id, signing?.key, timeoutMs);
    }
    const to = 'email' in delivery.target ? (delivery.target.email?.to ?? []) : [];
    return sendEmail(to, payload);
  };

  const attempt = async (delivery: ClaimedNotificationDelivery): Promise<void> => {
    const start = clock();
    const result = await send(delivery);
    try {
      await recordNotificationAttempt(store, delivery.id, start, clock(), result, policy);
    } catch (error) {
      // Unrecorded, the delivery is tried again when its lease ends.
      logger.error('could not record a notification attempt', {
        delivery_id: delivery.id,
        error: String(error),
      });
    }
  };

  const pass = async (): Promise<void> => {
    if (!running) return;
    if (passing) {
      passAgain = true;
      return;
    }
    const room = concurrency - underWay.size;
    if (room <= 0) return;
    passing = true;
    let claimed: ClaimedNotificationDelivery[] = [];
    try {
      claimed = await claimDueNotifications(store, clock(), room, leaseMs);
    } catch (error) {
      // The database refused (busy, full): the next pass tries again.
      logger.warn('could not claim notifications', { error: String(error) });
    } finally {
      passing = false;
    }
    for (const delivery of claimed) {
      const underway = attempt(delivery).finally(() => {
        underWay.delete(underway);
        void pass();
      });
      underWay.add(underway);
    }
    if (passAgain) {
      passAgain = false;
      void pass();
    }
  };

  return {
    start() {
      if (running) return;
      running = true;
      timer = setInterval(pass, pollIntervalMs);
      timer.unref();
      void pass();
    },
    async stop() {
      running = false;
      clearInterval(timer);
      await Promise.all(underWay);
    },
  };
}
