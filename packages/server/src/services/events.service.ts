import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { EventFilters, Store } from '../store/index.js';
import type { EventIntake } from './intake/event-intake.js';

type Event = Schemas['Event'];
type Project = Schemas['Project'];

export function createEventService(store: Store, intake: EventIntake) {
  return {
    /**
     * One event per enabled trigger that accepts the custom event, in the trigger's project,
     * each starting the trigger's pipelines, all in one transaction. The project header, or the
     * project of a task's key, limits the triggers to that project.
     */
    async create(
      principal: Principal,
      project: Project | undefined,
      submitted: Schemas['CustomEvent'],
    ): Promise<Event[]> {
      const projectId = principal.projectId ?? project?.id;
      const matched = await intake.match(principal.orgId, submitted, projectId);
      const admitted = await intake.receive(principal.orgId, submitted, matched);
      return admitted.map((a) => a.event);
    },

    /** A copy of the event, pointing to it, that starts the same trigger's or command's pipelines. */
    async replay(project: Project, id: string): Promise<Event> {
      const { result, released } = await intake.transaction(async (admit, tx) => {
        const original = await tx.events.get(project.id, id);
        if (!original) throw new DomainError('unknown_event', `no event ${id}`, { id });
        const {
          id: _id,
          creation_time: _created,
          event_time: _at,
          original_event_id: _from,
          ...copied
        } = original;
        return (await admit({ ...copied, original_event_id: id })).event;
      });
      await released;
      return result;
    },

    async get(project: Project, id: string): Promise<Event> {
      const event = await store.events.get(project.id, id);
      if (!event) throw new DomainError('unknown_event', `no event ${id}`, { id });
      return event;
    },

    list(project: Project, filters: EventFilters, request: PageRequest): Promise<Page<Event>> {
      return store.events.list(project.id, filters, request);
    },
  };
}
