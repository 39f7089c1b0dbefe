import { isDeepStrictEqual } from 'node:util';
import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { parameterEnvironment } from '../domain/parameter-values.js';
import type { Principal } from '../domain/principal.js';
import { formatTime, normalizeTime } from '../domain/time.js';
import { filtersMatch } from '../domain/trigger-filters.js';
import type { EventFilters, Store } from '../store/index.js';
import { completeInstantiationsOfRequest, instantiatePipelines } from './instantiation.js';
import { timeSlicer } from './time-slices.js';
import type { WorkNotifier } from './work.js';

type Event = Schemas['Event'];
type Project = Schemas['Project'];
type TriggerSpec = Extract<Schemas['ResourceSpec'], { type: 'trigger' }>;
type CommandSpec = Extract<Schemas['ResourceSpec'], { type: 'command' }>;

export function createEventService(store: Store, work: WorkNotifier, clock: () => Date) {
  const trigger = (projectId: string, id: string) => {
    const resource = store.resources.get(projectId, id);
    return resource?.spec.type === 'trigger' && !resource.disabled
      ? (resource.spec as TriggerSpec)
      : undefined;
  };

  /** What replaying an event starts: the pipelines of its trigger or command, as they are now. */
  const replayTarget = (event: Event): { pipelines: string[]; environment: Record<string, string> } => {
    if (event.trigger_id) {
      return {
        pipelines: trigger(event.project_id, event.trigger_id)?.data.pipelines ?? [],
        environment: {},
      };
    }
    const command = event.command_id ? store.resources.get(event.project_id, event.command_id) : undefined;
    if (command?.spec.type !== 'command') return { pipelines: [], environment: {} };
    const spec = command.spec as CommandSpec;
    const parameters =
      (event.data as { parameters?: Record<string, Schemas['ParameterValue']> }).parameters ?? {};
    return {
      pipelines: spec.data.pipelines,
      environment: parameterEnvironment(spec.data.parameters ?? [], parameters),
    };
  };

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
      // Weighed outside the transaction, a slice of the event loop at a time.
      const matched: { ref: { project_id: string; id: string }; data: TriggerSpec['data'] }[] = [];
      // One match is bounded (TriggerFilter), but an organization may have thousands of triggers.
      const yieldSometimes = timeSlicer();
      for (const ref of store.triggers.listening(principal.orgId, 'custom', submitted.name, projectId)) {
        const spec = trigger(ref.project_id, ref.id);
        if (spec && filtersMatch(spec.data.filters, submitted.data)) matched.push({ ref, data: spec.data });
        await yieldSometimes();
      }
      const created = store.transaction(() => {
        const time = formatTime(clock());
        const eventTime = submitted.event_time ? normalizeTime(submitted.event_time) : time;
        const events: { event: Event; pipelineIds: string[] }[] = [];
        for (const { ref, data } of matched) {
          // A trigger removed, disabled or changed meanwhile is taken as it is now: it fires if it
          // still listens to this event and its filters (weighed again if they changed) accept it.
          const spec = trigger(ref.project_id, ref.id);
          if (!spec || spec.data.connector !== data.connector || spec.data.event !== data.event) continue;
          if (
            !isDeepStrictEqual(spec.data.filters, data.filters) &&
            !filtersMatch(spec.data.filters, submitted.data)
          )
            continue;
          const event: Event = {
            id: newId(),
            org_id: principal.orgId,
            project_id: ref.project_id,
            trigger_id: ref.id,
            creation_time: time,
            event_time: eventTime,
            connector: 'custom',
            name: submitted.name,
            data: submitted.data,
            original_event_id: null,
          };
          store.events.insert(event);
          const pipelineIds = instantiatePipelines(store, {
            event,
            pipelines: spec.data.pipelines,
            trigger_id: ref.id,
            environment: {},
            time,
          });
          events.push({ event, pipelineIds });
        }
        return events;
      });
      await completeInstantiationsOfRequest(
        store,
        created.flatMap((c) => c.pipelineIds),
      );
      if (created.length > 0) work.wakeUp();
      return created.map((c) => c.event);
    },

    /** A copy of the event, pointing to it, that starts the same trigger's or command's pipelines. */
    async replay(project: Project, id: string): Promise<Event> {
      const replayed = store.transaction(() => {
        const original = store.events.get(project.id, id);
        if (!original) throw new DomainError('unknown_event', `no event ${id}`, { id });
        const time = formatTime(clock());
        const {
          id: _id,
          creation_time: _created,
          event_time: _at,
          original_event_id: _from,
          ...copied
        } = original;
        const event: Event = {
          ...copied,
          id: newId(),
          creation_time: time,
          event_time: time,
          original_event_id: id,
        };
        store.events.insert(event);
        const target = replayTarget(original);
        const pipelineIds = instantiatePipelines(store, {
          event,
          pipelines: target.pipelines,
          ...(event.trigger_id ? { trigger_id: event.trigger_id } : {}),
          ...(event.command_id ? { command_id: event.command_id } : {}),
          environment: target.environment,
          time,
        });
        return { event, pipelineIds };
      });
      await completeInstantiationsOfRequest(store, replayed.pipelineIds);
      work.wakeUp();
      return replayed.event;
    },

    get(project: Project, id: string): Event {
      const event = store.events.get(project.id, id);
      if (!event) throw new DomainError('unknown_event', `no event ${id}`, { id });
      return event;
    },

    list(project: Project, filters: EventFilters, request: PageRequest): Page<Event> {
      return store.events.list(project.id, filters, request);
    },
  };
}
