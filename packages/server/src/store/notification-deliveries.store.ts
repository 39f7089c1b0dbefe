import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { Db } from './db.js';
import type { QueryBuilder } from './dialect.js';
import { paginate } from './paginate.js';
import type { Executor } from './sql.js';

type NotificationDelivery = Schemas['NotificationDelivery'];
type NotificationAttempt = Schemas['NotificationAttempt'];
type DeliveryStatus = Schemas['NotificationDeliveryStatus'];

/** Where a delivery goes: one webhook or one email, as a pipeline's `notifications` name them. */
export type NotificationTarget = Pick<NotificationDelivery, 'webhook'> | Pick<NotificationDelivery, 'email'>;

export interface NewNotificationDelivery {
  id: string;
  project_id: string;
  pipeline_id: string;
  pipeline_status: NotificationDelivery['pipeline_status'];
  target: NotificationTarget;
  /** The JSON of the payload: the exact body a webhook is posted (and signed). */
  payload: string;
  creation_time: string;
  /** When the first attempt is due: at once. */
  next_attempt_time: string;
}

/** A delivery the notifier claimed, with what an attempt needs. */
export interface ClaimedNotificationDelivery {
  id: string;
  project_id: string;
  target: NotificationTarget;
  payload: string;
}

/** What a pipeline's end needs to make its notifications: its spec's, and its project's name. */
export interface PipelineNotifications {
  project_id: string;
  project_name: string;
  notifications: Schemas['PipelineNotification'][];
}

/** Where a delivery stands after an attempt: due again at a time, or ended. */
export type DeliveryNext =
  | { status: 'pending'; next_attempt_time: string }
  | { status: 'delivered' | 'failed'; end_time: string };

export interface NotificationDeliveryFilters {
  pipelineId?: string | undefined;
  status?: DeliveryStatus | undefined;
}

interface DeliveryRow extends Record<string, unknown> {
  id: string;
  project_id: string;
  pipeline_id: string;
  pipeline_status: NotificationDelivery['pipeline_status'];
  channel: 'webhook' | 'email';
  target: string;
  payload: string;
  status: DeliveryStatus;
  creation_time: string;
  next_attempt_time: string | null;
  end_time: string | null;
}

interface AttemptRow {
  number: number;
  start_time: string;
  duration_ms: number;
  succeeded: number;
  status_code: number | null;
  error: string | null;
}

function toAttempt(row: AttemptRow): NotificationAttempt {
  return {
    number: row.number,
    start_time: row.start_time,
    duration_ms: row.duration_ms,
    succeeded: row.succeeded === 1,
    ...(row.status_code === null ? {} : { status_code: row.status_code }),
    ...(row.error === null ? {} : { error: row.error }),
  };
}

export function createNotificationDeliveryStore(db: Db, q: QueryBuilder, x: Executor) {
  const insert = db.prepare(
    `INSERT INTO notification_deliveries (id, project_id, pipeline_id, pipeline_status, channel, target,
                                          payload, status, creation_time, next_attempt_time)
     VALUES (@id, @project_id, @pipeline_id, @pipeline_status, @channel, @target,
             @payload, 'pending', @creation_time, @next_attempt_time)`,
  );
  // Reads the pipelines table: the notifications are a part of the spec a pipeline keeps, and
  // only they are read (json_extract), not the whole spec, at every end of a pipeline.
  const notificationsOf = db.prepare<
    [string],
    { project_id: string; project_name: string; notifications: string | null }
  >(
    `SELECT pipelines.project_id, projects.name AS project_name,
            json_extract(pipelines.spec, '$.data.notifications') AS notifications
     FROM pipelines JOIN projects ON projects.id = pipelines.project_id
     WHERE pipelines.id = ?`,
  );
  const due = db.prepare<
    [string, number],
    { id: string; project_id: string; target: string; payload: string }
  >(
    `SELECT id, project_id, target, payload FROM notification_deliveries
     WHERE status = 'pending' AND next_attempt_time <= ?
     ORDER BY next_attempt_time, id LIMIT ?`,
  );
  const postpone = db.prepare<[string, string]>(
    `UPDATE notification_deliveries SET next_attempt_time = ? WHERE id = ? AND status = 'pending'`,
  );
  const addAttempt = db.prepare(
    `INSERT INTO notification_attempts (delivery_id, number, start_time, duration_ms, succeeded, status_code, error)
     SELECT @id, COALESCE(MAX(number), 0) + 1, @start_time, @duration_ms, @succeeded, @status_code, @error
     FROM notification_attempts WHERE delivery_id = @id
     RETURNING number`,
  );
  const exists = db.prepare<[string], { status: DeliveryStatus }>(
    'SELECT status FROM notification_deliveries WHERE id = ?',
  );
  const settle = db.prepare(
    `UPDATE notification_deliveries SET status = @status, next_attempt_time = @next_attempt_time, end_time = @end_time
     WHERE id = @id`,
  );
  const attemptsOf = db.prepare<[string], AttemptRow>(
    'SELECT * FROM notification_attempts WHERE delivery_id = ? ORDER BY number',
  );

  const toDelivery = (row: DeliveryRow): NotificationDelivery => ({
    id: row.id,
    project_id: row.project_id,
    pipeline_id: row.pipeline_id,
    pipeline_status: row.pipeline_status,
    ...JSON.parse(row.target),
    status: row.status,
    creation_time: row.creation_time,
    ...(row.status === 'pending' && row.next_attempt_time !== null
      ? { next_attempt_time: row.next_attempt_time }
      : {}),
    ...(row.end_time === null ? {} : { end_time: row.end_time }),
    attempts: attemptsOf.all(row.id).map(toAttempt),
    payload: JSON.parse(row.payload),
  });

  return {
    insert(delivery: NewNotificationDelivery): void {
      const { target, ...rest } = delivery;
      insert.run({
        ...rest,
        channel: 'webhook' in target ? 'webhook' : 'email',
        target: JSON.stringify(target),
      });
    },
    /** The notifications of a pipeline's spec (none: an empty list), or undefined for no such pipeline. */
    pipelineNotifications(pipelineId: string): PipelineNotifications | undefined {
      const row = notificationsOf.get(pipelineId);
      if (!row) return undefined;
      return {
        project_id: row.project_id,
        project_name: row.project_name,
        notifications: row.notifications === null ? [] : JSON.parse(row.notifications),
      };
    },
    /** Pending deliveries due at `now`, the longest due first, at most `limit`. */
    due(now: string, limit: number): ClaimedNotificationDelivery[] {
      return due.all(now, limit).map((row) => ({ ...row, target: JSON.parse(row.target) }));
    },
    /** Moves the next attempt of a pending delivery to `time`. */
    postpone(id: string, time: string): void {
      postpone.run(time, id);
    },
    /**
     * Records an attempt (numbered after the last one) and where the delivery stands after it;
     * returns the attempt's number, or undefined when the delivery is gone (its pipeline deleted).
     */
    recordAttempt(
      id: string,
      attempt: Omit<NotificationAttempt, 'number'>,
      next: (number: number) => DeliveryNext,
    ): number | undefined {
      if (!exists.get(id)) return undefined;
      const { number } = addAttempt.get({
        id,
        start_time: attempt.start_time,
        duration_ms: attempt.duration_ms,
        succeeded: attempt.succeeded ? 1 : 0,
        status_code: attempt.status_code ?? null,
        error: attempt.error ?? null,
      }) as { number: number };
      const after = next(number);
      settle.run({
        id,
        status: after.status,
        next_attempt_time: after.status === 'pending' ? after.next_attempt_time : null,
        end_time: after.status === 'pending' ? null : after.end_time,
      });
      return number;
    },
    list(
      projectId: string,
      filters: NotificationDeliveryFilters,
      request: PageRequest,
    ): Promise<Page<NotificationDelivery>> {
      let from = q.selectFrom('notification_deliveries').where('project_id', '=', projectId);
      if (filters.pipelineId !== undefined) from = from.where('pipeline_id', '=', filters.pipelineId);
      if (filters.status !== undefined) from = from.where('status', '=', filters.status);
      return paginate(x, {
        from,
        sorts: { id: 'id' },
        request,
        toElement: toDelivery,
      });
    },
  };
}
