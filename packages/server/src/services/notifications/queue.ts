import type { Schemas } from '@pipewright/types';
import {
  DEFAULT_NOTIFY_ON,
  type NotificationPayload,
  type PipelineEndStatus,
  type RetryPolicy,
  retryDelayMs,
} from '../../domain/execution/notifications.js';
import { newId } from '../../domain/ids.js';
import { formatTime } from '../../domain/time.js';
import type { ClaimedNotificationDelivery, NotificationTarget, Store, Tables } from '../../store/index.js';

// The durable queue of notifications of pipelines' ends (migration 018): filled where a
// pipeline ends, in its transaction, and emptied by the notifier (scheduler/notifier.ts), which
// claims what is due, sends it outside any transaction, and records each attempt.

/** Failed tasks a payload names at most, so that a pipeline of thousands stays a small body. */
const FAILED_TASKS_SHOWN = 10;

/** The deliveries a notification of the spec makes: its webhook, its email, or both. */
function targetsOf(notification: Schemas['PipelineNotification']): NotificationTarget[] {
  const { webhook, email } = notification;
  return [...(webhook ? [{ webhook }] : []), ...(email ? [{ email }] : [])];
}

/**
 * Stores the deliveries of the notifications the pipeline's spec names for `status`, in the
 * caller's transaction (the one that ends the pipeline): each says what the pipeline was when
 * it ended. Called for a pipeline whose spec names notifications (pipelines.finish tells).
 */
export async function queueNotifications(
  tx: Tables,
  pipelineId: string,
  status: PipelineEndStatus,
  time: string,
): Promise<void> {
  const found = await tx.notificationDeliveries.pipelineNotifications(pipelineId);
  const matching = (found?.notifications ?? []).filter((n) => (n.on ?? DEFAULT_NOTIFY_ON).includes(status));
  if (!found || matching.length === 0) return;
  const pipeline = await tx.pipelines.get(found.project_id, pipelineId);
  if (!pipeline) return;
  const failed = await tx.tasks.list(
    found.project_id,
    { pipeline_id: pipelineId, status: 'failed' },
    {
      size: FAILED_TASKS_SHOWN,
      sort: 'id',
      order: 'asc',
    },
  );
  const failedTasks = failed.elements.map((task) => ({
    id: task.id,
    name: task.name,
    ...(task.failure_message === undefined ? {} : { failure_message: task.failure_message }),
  }));
  for (const target of matching.flatMap(targetsOf)) {
    const id = newId(new Date(time));
    const payload: NotificationPayload = {
      delivery_id: id,
      project_name: found.project_name,
      pipeline,
      failed_tasks: failedTasks,
    };
    await tx.notificationDeliveries.insert({
      id,
      project_id: found.project_id,
      pipeline_id: pipelineId,
      pipeline_status: status,
      target,
      payload: JSON.stringify(payload),
      creation_time: time,
      next_attempt_time: time,
    });
  }
}

/**
 * Claims up to `limit` deliveries due at `now`: their next attempt moves `leaseMs` later, so
 * that nobody claims them again while they are sent, and a server that dies meanwhile sends
 * them again once the lease is over. A look that locks nothing comes first: most passes (one
 * after each pipeline's end) find nothing due, and the claim's transaction would hold the
 * write lock for that.
 */
export async function claimDueNotifications(
  store: Store,
  now: Date,
  limit: number,
  leaseMs: number,
): Promise<ClaimedNotificationDelivery[]> {
  const time = formatTime(now);
  if ((await store.notificationDeliveries.due(time, 1)).length === 0) return [];
  return store.transaction(async (tx) => {
    const due = await tx.notificationDeliveries.due(time, limit);
    const until = formatTime(new Date(now.getTime() + leaseMs));
    for (const delivery of due) await tx.notificationDeliveries.postpone(delivery.id, until);
    return due;
  });
}

/** What came of one attempt. `final` failures are not tried again (no SMTP server configured). */
export interface AttemptResult {
  succeeded: boolean;
  status_code?: number;
  error?: string;
  final?: boolean;
}

/**
 * Records an attempt that started at `start` and ended at `end`, and what follows: delivered,
 * tried again after the policy's wait, or failed for good after the last attempt allowed.
 */
export async function recordNotificationAttempt(
  store: Store,
  deliveryId: string,
  start: Date,
  end: Date,
  result: AttemptResult,
  policy: RetryPolicy,
): Promise<void> {
  const endTime = formatTime(end);
  await store.transaction((tx) =>
    tx.notificationDeliveries.recordAttempt(
      deliveryId,
      {
        start_time: formatTime(start),
        duration_ms: Math.max(0, end.getTime() - start.getTime()),
        succeeded: result.succeeded,
        ...(result.status_code === undefined ? {} : { status_code: result.status_code }),
        ...(result.error === undefined ? {} : { error: result.error }),
      },
      (number) => {
        if (result.succeeded) return { status: 'delivered', end_time: endTime };
        const delay = result.final ? undefined : retryDelayMs(number, policy);
        return delay === undefined
          ? { status: 'failed', end_time: endTime }
          : { status: 'pending', next_attempt_time: formatTime(new Date(end.getTime() + delay)) };
      },
    ),
  );
}
