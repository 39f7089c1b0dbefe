import { isDeepStrictEqual } from 'node:util';
import type { Schemas } from '@pipewright/types';
import { filtersMatch } from '../../domain/events/trigger-filters.js';
import { parameterEnvironment } from '../../domain/execution/parameter-values.js';
import { newId } from '../../domain/ids.js';
import { formatTime, normalizeTime } from '../../domain/time.js';
import type { Store, Tables } from '../../store/index.js';
import { timeSlicer } from '../concurrency/time-slices.js';
import type { WorkNotifier } from '../work.js';
import { completeInstantiationsOfRequest, instantiatePipelines } from './instantiation.js';

type Event = Schemas['Event'];
type Resource = Schemas['Resource'];
type TriggerSpec = Extract<Schemas['ResourceSpec'], { type: 'trigger' }>;
type CommandSpec = Extract<Schemas['ResourceSpec'], { type: 'command' }>;

/** An event as its source brings it (a sender, a webhook, the clock, a command), before it is stored. */
export interface Incoming {
  connector: Event['connector'];
  name: string;
  data: Event['data'];
  /** When it happened; the time it is stored when absent. */
  event_time?: string | undefined;
}

/**
 * An event to store: what its source brought, the project it goes to, and the trigger or the
 * command whose pipelines it starts; for a replay, the event it copies.
 */
export interface NewEvent extends Incoming {
  org_id: string;
  project_id: string;
  trigger_id?: string | undefined;
  command_id?: string | undefined;
  original_event_id?: string | undefined;
}

/** A trigger whose filters accepted an incoming event, as its spec was when they did. */
export interface MatchedTrigger {
  ref: { project_id: string; id: string };
  data: TriggerSpec['data'];
}

/** An event stored, and the pipelines it started. */
export interface Admitted {
  event: Event;
  pipelineIds: string[];
  /** The resources the pipelines were made from. */
  resourceIds: string[];
  /** Those of its pipelines whose tasks are not all written yet (instantiation.ts). */
  pendingIds: string[];
}

/** What `transaction` gives back: the result of its callback, and when the pipelines may run. */
export interface Admission<T> {
  result: T;
  /**
   * Settles once the tasks of the pipelines started are all written (pipelines too large for
   * one transaction get the rest in batches) and the workers have been woken. It never rejects:
   * what a failure leaves unwritten, the scheduler completes as it polls.
   */
  released: Promise<void>;
}

/**
 * The one way in for events, whatever their source: a custom event or a webhook delivery (one
 * event per trigger that accepts it), a tick of a time trigger, a command execution, a replay.
 * Each is stored with the pipelines of its trigger or command in one transaction, then the
 * workers are woken.
 */
export function createEventIntake(store: Store, work: Pick<WorkNotifier, 'wakeUp'>, clock: () => Date) {
  /** The spec of `resource`, if it is a trigger and enabled. */
  const triggerOf = (resource: Resource | undefined) =>
    resource?.spec.type === 'trigger' && !resource.disabled ? (resource.spec as TriggerSpec) : undefined;
  /** The trigger's spec, if it is installed and enabled. */
  const trigger = async (tables: Tables, projectId: string, id: string) =>
    triggerOf(await tables.resources.get(projectId, id));

  /**
   * The resources the last event of each trigger was made into pipelines from, by trigger: the
   * next one reads them with the trigger in one statement, in its transaction, rather than one by
   * one. A hint only: what changed since is read as before. Forgotten past its bound.
   */
  const lastResources = new Map<string, readonly string[]>();
  const LAST_RESOURCES_BOUND = 10_000;
  const learn = (triggerId: string, resourceIds: readonly string[]) => {
    if (lastResources.size >= LAST_RESOURCES_BOUND) lastResources.clear();
    lastResources.set(triggerId, resourceIds);
  };

  /**
   * What an event starts: the pipelines of its trigger or command as they are now, none if it
   * is gone. `read` is its trigger's spec, if the caller read it in this transaction already.
   */
  const targetOf = async (
    tx: Tables,
    event: Event,
    read?: TriggerSpec,
  ): Promise<{ pipelines: readonly string[]; environment: Record<string, string> }> => {
    if (event.trigger_id) {
      const spec = read ?? (await trigger(tx, event.project_id, event.trigger_id));
      return { pipelines: spec?.data.pipelines ?? [], environment: {} };
    }
    const command = event.command_id ? await tx.resources.get(event.project_id, event.command_id) : undefined;
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
   * Stores the event and creates the pipelines it starts, in the caller's transaction; `known`
   * are resources read in it already, which they may be made from.
   */
  const admit = async (
    tx: Tables,
    incoming: NewEvent,
    now: Date,
    read?: TriggerSpec,
    known?: readonly Resource[],
  ): Promise<Admitted> => {
    const time = formatTime(now);
    const event: Event = {
      id: newId(now),
      org_id: incoming.org_id,
      project_id: incoming.project_id,
      ...(incoming.trigger_id ? { trigger_id: incoming.trigger_id } : {}),
      ...(incoming.command_id ? { command_id: incoming.command_id } : {}),
      creation_time: time,
      event_time: incoming.event_time ? normalizeTime(incoming.event_time) : time,
      connector: incoming.connector,
      name: incoming.name,
      data: incoming.data,
      original_event_id: incoming.original_event_id ?? null,
    };
    await tx.events.insert(event);
    const target = await targetOf(tx, event, read);
    const {
      ids: pipelineIds,
      pending: pendingIds,
      resourceIds,
    } = await instantiatePipelines(tx, {
      event,
      pipelines: target.pipelines,
      ...(event.trigger_id ? { trigger_id: event.trigger_id } : {}),
      ...(event.command_id ? { command_id: event.command_id } : {}),
      environment: target.environment,
      time,
      ...(known ? { known } : {}),
    });
    return { event, pipelineIds, pendingIds, resourceIds };
  };

  /** Lets the pipelines of committed events run. */
  const release = async (admitted: readonly Admitted[]): Promise<void> => {
    if (admitted.length === 0) return;
    // Each pipeline left pending gets its tasks now; the others have them all.
    await completeInstantiationsOfRequest(
      store,
      admitted.flatMap((a) => a.pendingIds),
    );
    work.wakeUp();
  };

  /**
   * Runs `within` in one IMMEDIATE transaction, where `admit` stores events, each with the
   * pipelines it starts (those of its trigger's spec, if given as read in `tx`), beside what the caller writes with them through `tx` (or refuses by
   * throwing); `now` is their creation time. Then releases their pipelines.
   */
  const transaction = async <T>(
    within: (
      admit: (event: NewEvent, read?: TriggerSpec, known?: readonly Resource[]) => Promise<Admitted>,
      tx: Tables,
    ) => Promise<T>,
    now = clock(),
  ): Promise<Admission<T>> => {
    const admitted: Admitted[] = [];
    const result = await store.transaction((tx) =>
      within(async (event, read, known) => {
        const one = await admit(tx, event, now, read, known);
        admitted.push(one);
        return one;
      }, tx),
    );
    return { result, released: release(admitted) };
  };

  return {
    transaction,

    /**
     * The enabled triggers of the organization (of one project, when given) that listen to the
     * incoming event and whose filters accept it, weighed outside any transaction, a slice of
     * the event loop at a time: one match is bounded (TriggerFilter), but an organization may
     * have thousands of triggers.
     */
    async match(orgId: string, incoming: Incoming, projectId: string | undefined): Promise<MatchedTrigger[]> {
      const matched: MatchedTrigger[] = [];
      const yieldSometimes = timeSlicer();
      for (const ref of await store.triggers.listening(orgId, incoming.connector, incoming.name, projectId)) {
        const spec = await trigger(store, ref.project_id, ref.id);
        if (spec && filtersMatch(spec.data.filters, incoming.data)) matched.push({ ref, data: spec.data });
        await yieldSometimes();
      }
      return matched;
    },

    /**
     * Stores an event for each of the `matched` triggers that still accepts it, each starting the
     * trigger's pipelines, in one transaction that runs `alongside` first (what the caller writes
     * with them, or refuses by throwing); then lets the pipelines run.
     */
    async receive(
      orgId: string,
      incoming: Incoming,
      matched: readonly MatchedTrigger[],
      alongside: (tx: Tables) => Promise<void> = async () => undefined,
    ): Promise<Admitted[]> {
      const { result, released } = await transaction(async (admit, tx) => {
        await alongside(tx);
        const admitted: Admitted[] = [];
        for (const { ref, data } of matched) {
          // A trigger removed, disabled or changed meanwhile is taken as it is now: it fires if it
          // still listens to this event and its filters (weighed again if they changed) accept it.
          const learnt = lastResources.get(ref.id);
          const known = learnt ? await tx.resources.getMany(ref.project_id, [ref.id, ...learnt]) : [];
          const mine = known.find((resource) => resource.id === ref.id);
          const spec = mine ? triggerOf(mine) : await trigger(tx, ref.project_id, ref.id);
          if (!spec || spec.data.connector !== data.connector || spec.data.event !== data.event) continue;
          if (
            !isDeepStrictEqual(spec.data.filters, data.filters) &&
            !filtersMatch(spec.data.filters, incoming.data)
          )
            continue;
          // Named one by one: nothing else the incoming object holds (a command_id) is the event's.
          const event = {
            org_id: orgId,
            project_id: ref.project_id,
            trigger_id: ref.id,
            connector: incoming.connector,
            name: incoming.name,
            data: incoming.data,
            event_time: incoming.event_time,
          };
          // The trigger as just read: its pipelines are those the event starts.
          const one = await admit(event, spec, known);
          learn(ref.id, one.resourceIds);
          admitted.push(one);
        }
        return admitted;
      });
      await released;
      return result;
    },
  };
}

export type EventIntake = ReturnType<typeof createEventIntake>;
