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

/** An event as a connector brings it, before a trigger accepts it. */
export interface Incoming {
  connector: Event['connector'];
  name: string;
  data: Event['data'];
  /** When it happened; the time it is stored when absent. */
  event_time?: string | undefined;
}

/** A trigger whose filters accepted an incoming event, as its spec was when they did. */
export interface MatchedTrigger {
  ref: { project_id: string; id: string };
  data: TriggerSpec['data'];
}

/** An event stored for a trigger, and the pipelines it started. */
export interface Fired {
  event: Event;
  pipelineIds: string[];
}

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

  /**
   * Stores an event for each of the `matched` triggers that still accepts it, each starting the
   * trigger's pipelines, in one transaction that runs `alongside` first (what the caller writes
   * with them, or refuses by throwing); then lets the pipelines run.
   */
  const fire = async (
    orgId: string,
    incoming: Incoming,
    matched: readonly MatchedTrigger[],
    alongside: () => void = () => undefined,
  ): Promise<Fired[]> => {
    const fired = store.transaction(() => {
      alongside();
      const time = formatTime(clock());
      const eventTime = incoming.event_time ? normalizeTime(incoming.event_time) : time;
      const events: Fired[] = [];
      for (const { ref, data } of matched) {
        // A trigger removed, disabled or changed meanwhile is taken as it is now: it fires if it
        // still listens to this event and its filters (weighed again if they changed) accept it.
        const spec = trigger(ref.project_id, ref.id);
        if (!spec || spec.data.connector !== data.connector || spec.data.event !== data.event) continue;
        if (
          !isDeepStrictEqual(spec.data.filters, data.filters) &&
          !filtersMatch(spec.data.filters, incoming.data)
        )
          continue;
        const event: Event = {
          id: newId(),
          org_id: orgId,
          project_id: ref.project_id,
          trigger_id: ref.id,
          creation_time: time,
          event_time: eventTime,
          connector: incoming.connector,
          name: incoming.name,
          data: incoming.data,
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
      fired.flatMap((f) => f.pipelineIds),
    );
    if (fired.length > 0) work.wakeUp();
    return fired;
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
      const matched: MatchedTrigger[] = [];
      // One match is bounded (TriggerFilter), but an organization may have thousands of triggers.
      const yieldSometimes = timeSlicer();
      for (const ref of store.triggers.listening(principal.orgId, 'custom', submitted.name, projectId)) {
        const spec = trigger(ref.project_id, ref.id);
        if (spec && filtersMatch(spec.data.filters, submitted.data)) matched.push({ ref, data: spec.data });
        await yieldSometimes();
      }
      const fired = await fire(principal.orgId, submitted, matched);
      return fired.map((f) => f.event);
    },

    fire,

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
