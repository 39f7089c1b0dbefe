import { createHmac } from 'node:crypto';
import type { Schemas } from '@pipewright/types';

// What the notifications of pipelines' ends are made of, whatever sends them: when to try
// again, how a webhook body is signed, and what an email says.

export type NotificationPayload = Schemas['NotificationPayload'];
export type PipelineEndStatus = 'successful' | 'failed' | 'aborted';

/** The statuses that notify when a notification names none. */
export const DEFAULT_NOTIFY_ON: readonly PipelineEndStatus[] = ['failed'];

/** How many times, how often, and for how long a delivery is tried. */
export interface RetryPolicy {
  /** Attempts at most, the first included (the spec says 6). */
  maxAttempts: number;
  /** The wait after the first failed attempt; each next wait is twice the one before (30 s). */
  firstRetryDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 6, firstRetryDelayMs: 30_000 };

/**
 * The wait before the attempt after attempt `made` (1 for the first) failed, or undefined when
 * it was the last one allowed: exponential, so that a receiver that is down for a while is not
 * hammered, and one that is back soon hears soon.
 */
export function retryDelayMs(made: number, policy: RetryPolicy): number | undefined {
  if (made >= policy.maxAttempts) return undefined;
  return policy.firstRetryDelayMs * 2 ** (made - 1);
}

/** The header that signs a webhook body. */
export const SIGNATURE_HEADER = 'X-Pipewright-Signature-256';
/** The header that names the delivery, the same in each of its attempts. */
export const DELIVERY_HEADER = 'X-Pipewright-Delivery';

/** `sha256=` and the hexadecimal HMAC-SHA256 of `body` under `secret`, as GitHub signs its webhooks. */
export function signature(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The subject and plain text of the email a notification is sent as. */
export function emailMessage(payload: NotificationPayload): { subject: string; text: string } {
  const { pipeline, project_name: project } = payload;
  const subject = `[${project}] pipeline ${pipeline.name} ${pipeline.status}`;
  const lines = [
    `The pipeline "${pipeline.name}" of the project "${project}" ended ${pipeline.status}` +
      (pipeline.end_time ? ` at ${pipeline.end_time}.` : '.'),
    '',
    `Pipeline: ${pipeline.id}`,
    `Event: ${pipeline.event_id}`,
    ...(pipeline.start_time ? [`Started: ${pipeline.start_time}`] : []),
  ];
  if (payload.failed_tasks.length > 0) {
    lines.push('', 'Failed tasks:');
    for (const task of payload.failed_tasks) {
      lines.push(`- ${task.name} (${task.id})${task.failure_message ? `: ${task.failure_message}` : ''}`);
    }
  }
  lines.push('', `Delivery: ${payload.delivery_id}`);
  return { subject, text: `${lines.join('\n')}\n` };
}
