import type { Schemas } from '@pipewright/types';
import type { Selectable } from 'kysely';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { QueryBuilder } from './dialect.js';
import type { Events } from './generated/database.js';
import { paginate } from './paginate.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

type Event = Schemas['Event'];

export type EventRow = Selectable<Events>;

export function toEvent(row: EventRow): Event {
  const { trigger_id, command_id, data, ...rest } = row;
  return {
    ...rest,
    ...(trigger_id === null ? {} : { trigger_id }),
    ...(command_id === null ? {} : { command_id }),
    data: JSON.parse(data),
  };
}

export interface EventFilters {
  connector?: string | undefined;
  name?: string | undefined;
  /** The event that instantiated this pipeline. */
  pipeline_id?: string | undefined;
}

export function createEventStore(q: QueryBuilder, x: Executor) {
  const insert = prepared(
    11,
    (
      id: string,
      orgId: string,
      projectId: string,
      triggerId: string | null,
      commandId: string | null,
      creationTime: string,
      eventTime: string,
      connector: string,
      name: string,
      data: string,
      originalEventId: string | null,
    ) =>
      q.insertInto('events').values({
        id,
        org_id: orgId,
        project_id: projectId,
        trigger_id: triggerId,
        command_id: commandId,
        creation_time: creationTime,
        event_time: eventTime,
        connector,
        name,
        data,
        original_event_id: originalEventId,
      }),
  );
  const byId = prepared(2, (projectId: string, id: string) =>
    q.selectFrom('events').selectAll().where('project_id', '=', projectId).where('id', '=', id),
  );
  return {
    async insert(event: Event): Promise<void> {
      await x.run(
        insert(
          event.id,
          event.org_id,
          event.project_id,
          event.trigger_id ?? null,
          event.command_id ?? null,
          event.creation_time,
          event.event_time,
          event.connector,
          event.name,
          JSON.stringify(event.data),
          event.original_event_id,
        ),
      );
    },
    async get(projectId: string, id: string): Promise<Event | undefined> {
      const row = await x.first(byId(projectId, id));
      return row && toEvent(row);
    },
    list(projectId: string, filters: EventFilters, request: PageRequest): Promise<Page<Event>> {
      let from = q.selectFrom('events').where('project_id', '=', projectId);
      if (filters.connector !== undefined) from = from.where('connector', '=', filters.connector);
      if (filters.name !== undefined) from = from.where('name', '=', filters.name);
      const pipelineId = filters.pipeline_id;
      if (pipelineId !== undefined) {
        from = from.where('id', '=', (eb) =>
          eb
            .selectFrom('pipelines')
            .select('pipelines.event_id')
            .where('pipelines.id', '=', pipelineId)
            .whereRef('pipelines.project_id', '=', 'events.project_id'),
        );
      }
      return paginate<EventRow, Event>(x, {
        from,
        sorts: { id: 'id', event_time: 'event_time' },
        request,
        toElement: toEvent,
      });
    },
  };
}
