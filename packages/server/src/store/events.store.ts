import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { Db } from './db.js';
import { paginate } from './paginate.js';

type Event = Schemas['Event'];

interface EventRow extends Record<string, unknown> {
  id: string;
  org_id: string;
  project_id: string;
  trigger_id: string | null;
  command_id: string | null;
  creation_time: string;
  event_time: string;
  connector: string;
  name: string;
  data: string;
  original_event_id: string | null;
}

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

export function createEventStore(db: Db) {
  const insert = db.prepare(
    `INSERT INTO events (id, org_id, project_id, trigger_id, command_id, creation_time, event_time,
                         connector, name, data, original_event_id)
     VALUES (@id, @org_id, @project_id, @trigger_id, @command_id, @creation_time, @event_time,
             @connector, @name, @data, @original_event_id)`,
  );
  const byId = db.prepare<[string, string], EventRow>('SELECT * FROM events WHERE project_id = ? AND id = ?');
  return {
    insert(event: Event): void {
      insert.run({
        trigger_id: null,
        command_id: null,
        ...event,
        data: JSON.stringify(event.data),
      });
    },
    get(projectId: string, id: string): Event | undefined {
      const row = byId.get(projectId, id);
      return row && toEvent(row);
    },
    list(projectId: string, filters: EventFilters, request: PageRequest): Page<Event> {
      const where = ['project_id = ?'];
      const params: unknown[] = [projectId];
      if (filters.connector !== undefined) {
        where.push('connector = ?');
        params.push(filters.connector);
      }
      if (filters.name !== undefined) {
        where.push('name = ?');
        params.push(filters.name);
      }
      if (filters.pipeline_id !== undefined) {
        where.push('id = (SELECT event_id FROM pipelines WHERE id = ? AND project_id = events.project_id)');
        params.push(filters.pipeline_id);
      }
      return paginate(db, {
        table: 'events',
        where,
        params,
        sorts: { id: 'id', event_time: 'event_time' },
        request,
        toElement: toEvent,
      });
    },
  };
}
