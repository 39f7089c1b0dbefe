import type { Schemas } from '@pipewright/types';
import type { Selectable } from 'kysely';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { QueryBuilder } from './dialect.js';
import type { Events } from './generated/database.js';
import { paginate } from './paginate.js';
import type { Executor } from './sql.js';

type Event = Schemas['Event'];

type EventRow = Selectable<Events>;

function toEvent(row: EventRow): Event {
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
  return {
    async insert(event: Event): Promise<void> {
      await x.run(
        q.insertInto('events').values({
          id: event.id,
          org_id: event.org_id,
          project_id: event.project_id,
          trigger_id: event.trigger_id ?? null,
          command_id: event.command_id ?? null,
          creation_time: event.creation_time,
          event_time: event.event_time,
          connector: event.connector,
          name: event.name,
          data: JSON.stringify(event.data),
          original_event_id: event.original_event_id,
        }),
      );
    },
    async get(projectId: string, id: string): Promise<Event | undefined> {
      const row = await x.first(
        q.selectFrom('events').selectAll().where('project_id', '=', projectId).where('id', '=', id),
      );
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
