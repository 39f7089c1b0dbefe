import type { Schemas } from '@pipewright/types';
import { type Selectable, sql } from 'kysely';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { Dialect } from './dialect.js';
import type { NotificationAttempts } from './generated/database.js';
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

interface DeliveryRow {
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

type AttemptRow = Selectable<NotificationAttempts>;

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

export function createNotificationDeliveryStore(d: Dialect, x: Executor) {
  const { q } = d;
  const deliveries = q.selectFrom('notification_deliveries');
  const attemptsOf = (id: string) =>
    x.all(q.selectFrom('notification_attempts').selectAll().where('delivery_id', '=', id).orderBy('number'));

  const toDelivery = (row: DeliveryRow, attempts: AttemptRow[]): NotificationDelivery => ({
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
    attempts: attempts.map(toAttempt),
    payload: JSON.parse(row.payload),
  });

  return {
    async insert(delivery: NewNotificationDelivery): Promise<void> {
      const { target } = delivery;
      await x.run(
        q.insertInto('notification_deliveries').values({
          id: delivery.id,
          project_id: delivery.project_id,
          pipeline_id: delivery.pipeline_id,
          pipeline_status: delivery.pipeline_status,
          channel: 'webhook' in target ? 'webhook' : 'email',
          target: JSON.stringify(target),
          payload: delivery.payload,
          status: 'pending',
          creation_time: delivery.creation_time,
          next_attempt_time: delivery.next_attempt_time,
        }),
      );
    },
    /** The notifications of a pipeline's spec (none: an empty list), or undefined for no such pipeline. */
    async pipelineNotifications(pipelineId: string): Promise<PipelineNotifications | undefined> {
      // Reads the pipelines table: the notifications are a part of the spec a pipeline keeps, and
      // only they are read (jsonText), not the whole spec, at every end of a pipeline.
      const row = await x.first(
        q
          .selectFrom('pipelines')
          .innerJoin('projects', 'projects.id', 'pipelines.project_id')
          .select([
            'pipelines.project_id',
            'projects.name as project_name',
            d.jsonText('pipelines.spec', 'data', 'notifications').as('notifications'),
          ])
          .where('pipelines.id', '=', pipelineId),
      );
      if (!row) return undefined;
      return {
        project_id: row.project_id,
        project_name: row.project_name,
        notifications: row.notifications === null ? [] : JSON.parse(row.notifications),
      };
    },
    /** Pending deliveries due at `now`, the longest due first, at most `limit`. */
    async due(now: string, limit: number): Promise<ClaimedNotificationDelivery[]> {
      // `status = 'pending'` as a literal: the WHERE of the partial index notification_deliveries_due.
      const rows = await x.all(
        deliveries
          .select(['id', 'project_id', 'target', 'payload'])
          .where('status', '=', sql.lit('pending'))
          .where('next_attempt_time', '<=', now)
          .orderBy('next_attempt_time')
          .orderBy('id')
          .limit(limit),
      );
      return rows.map((row) => ({ ...row, target: JSON.parse(row.target) }));
    },
    /** Moves the next attempt of a pending delivery to `time`. */
    async postpone(id: string, time: string): Promise<void> {
      await x.run(
        q
          .updateTable('notification_deliveries')
          .set({ next_attempt_time: time })
          .where('id', '=', id)
          .where('status', '=', sql.lit('pending')),
      );
    },
    /**
     * Records an attempt (numbered after the last one) and where the delivery stands after it;
     * returns the attempt's number, or undefined when the delivery is gone (its pipeline deleted).
     */
    async recordAttempt(
      id: string,
      attempt: Omit<NotificationAttempt, 'number'>,
      next: (number: number) => DeliveryNext,
    ): Promise<number | undefined> {
      if (!(await x.first(deliveries.select('status').where('id', '=', id)))) return undefined;
      const added = await x.first(
        q
          .insertInto('notification_attempts')
          .values((eb) => ({
            delivery_id: id,
            // After the last attempt's, read by the statement that inserts it.
            number: eb
              .selectFrom('notification_attempts')
              .select((eb) => eb(eb.fn.coalesce(eb.fn.max('number'), eb.lit(0)), '+', eb.lit(1)).as('next'))
              .where('delivery_id', '=', id),
            start_time: attempt.start_time,
            duration_ms: attempt.duration_ms,
            succeeded: attempt.succeeded ? 1 : 0,
            status_code: attempt.status_code ?? null,
            error: attempt.error ?? null,
          }))
          .returning('number'),
      );
      const { number } = added as { number: number };
      const after = next(number);
      await x.run(
        q
          .updateTable('notification_deliveries')
          .set({
            status: after.status,
            next_attempt_time: after.status === 'pending' ? after.next_attempt_time : null,
            end_time: after.status === 'pending' ? null : after.end_time,
          })
          .where('id', '=', id),
      );
      return number;
    },
    async list(
      projectId: string,
      filters: NotificationDeliveryFilters,
      request: PageRequest,
    ): Promise<Page<NotificationDelivery>> {
      let from = deliveries.where('project_id', '=', projectId);
      if (filters.pipelineId !== undefined) from = from.where('pipeline_id', '=', filters.pipelineId);
      if (filters.status !== undefined) from = from.where('status', '=', filters.status);
      const page = await paginate<DeliveryRow, DeliveryRow>(x, {
        from,
        sorts: { id: 'id' },
        request,
        toElement: (row) => row,
      });
      // The attempts of each delivery, in the order of the page.
      const elements = await Promise.all(
        page.elements.map(async (row) => toDelivery(row, await attemptsOf(row.id))),
      );
      return { ...page, elements };
    },
  };
}
