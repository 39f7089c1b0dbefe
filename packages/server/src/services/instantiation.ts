import type { Schemas } from '@pipewright/types';
import { newId } from '../domain/ids.js';
import { entryName } from '../domain/resource-pipelines.js';
import { entryLinks } from '../domain/task-graph.js';
import type { PipelineRecord, Store } from '../store/index.js';
import { mustQueue } from './pipeline-queue.js';
import { nextTurn } from './time-slices.js';

type Event = Schemas['Event'];
type Resource = Schemas['Resource'];

/**
 * Task instances written in one transaction. A pipeline with more gets the first ones in the
 * transaction that makes it and the rest in transactions of this size, with a turn of the
 * event loop between them (completeInstantiations): creating 10,000 tasks at once would hold
 * the server's one thread for a few hundred milliseconds.
 */
export const INSTANTIATION_BATCH = 500;

export interface Instantiation {
  event: Event;
  /** Names of the pipeline resources to instantiate, in the event's project. */
  pipelines: readonly string[];
  trigger_id?: string;
  command_id?: string;
  /** Variables for every task (from command parameters). */
  environment: Record<string, string>;
  time: string;
}

/** The task instances of a pipeline, in the order they are created: entry by entry, instance by instance. */
function instancesOf(spec: Schemas['PipelineSpec']) {
  return spec.data.tasks.flatMap((entry) =>
    Array.from({ length: entry.nb_instances ?? 1 }, (_, i) => ({ entry, instance: i + 1 })),
  );
}

/**
 * Writes the task instances of `pipeline` from the `from`-th, at most INSTANTIATION_BATCH of
 * them, with the task resources it was made with; returns whether they are all written. While
 * some are missing, each one written is held once more (see migration 010), so that none runs
 * before all exist; a pipeline aborted meanwhile gets its missing tasks aborted.
 */
function writeInstances(
  store: Store,
  pipeline: PipelineRecord,
  tasks: Record<string, Resource>,
  from: number,
) {
  const instances = instancesOf(pipeline.spec);
  const links = entryLinks(pipeline.spec.data.tasks.map((entry) => ({ ...entry, name: entryName(entry) })));
  const to = Math.min(instances.length, from + INSTANTIATION_BATCH);
  const held = (pipeline.queued ? 1 : 0) + (pipeline.pending_tasks ? 1 : 0);
  const aborted = pipeline.status === 'aborted';
  for (const { entry, instance } of instances.slice(from, to)) {
    const name = entryName(entry);
    const task = tasks[entry.task] as Resource & { spec: Schemas['TaskSpec'] };
    const { blockers, dependents } = links.get(name) ?? { blockers: 0, dependents: [] };
    store.tasks.insert(
      {
        id: newId(),
        org_id: pipeline.org_id,
        project_id: pipeline.project_id,
        pipeline_id: pipeline.id,
        task_id: task.id,
        name,
        pipeline_task: entry,
        spec: task.spec,
        task_identities: task.spec.data.identities ?? [],
        dependencies: entry.dependencies ?? [],
        instance_id: instance,
        retry: 0,
        status: aborted ? 'aborted' : 'created',
        creation_time: pipeline.creation_time,
        ...(aborted && pipeline.end_time ? { end_time: pipeline.end_time } : {}),
      },
      { blockers: blockers + held, dependents },
    );
  }
  return to === instances.length;
}

/**
 * Creates the pipelines of an event with their task instances in `created`, copying the specs
 * as they are now: later installs never change a pipeline already created. Runs inside the
 * caller's transaction; returns the new pipeline ids. A pipeline of more than
 * INSTANTIATION_BATCH instances gets only its first ones here: completeInstantiations writes
 * the rest once the caller's transaction has committed.
 */
export function instantiatePipelines(store: Store, request: Instantiation): string[] {
  const { event, time } = request;
  // Read once each, in this transaction: a pipeline of 200 entries often names one task 200 times.
  const read = new Map<string, Resource>();
  const resourceOf = <T extends Resource['spec']['type']>(type: T, name: string) => {
    const key = `${type}/${name}`;
    let resource = read.get(key);
    if (!resource) {
      resource = store.resources.getByTypeAndName(event.project_id, type, name);
      // Installs check every reference, so a missing one means the set changed meanwhile.
      if (!resource) throw new Error(`${type} ${name} of project ${event.project_id} is not installed`);
      read.set(key, resource);
    }
    return resource as Resource & { spec: Extract<Schemas['ResourceSpec'], { type: T }> };
  };
  return request.pipelines.map((name) => {
    const resource = resourceOf('pipeline', name);
    const concurrent = resource.spec.data.concurrent ?? false;
    const tasks = Object.fromEntries(
      resource.spec.data.tasks.map((entry) => [entry.task, resourceOf('task', entry.task)]),
    );
    const pending = instancesOf(resource.spec).length > INSTANTIATION_BATCH;
    const pipeline: PipelineRecord = {
      id: newId(),
      org_id: event.org_id,
      project_id: event.project_id,
      name,
      pipeline_id: resource.id,
      ...(request.trigger_id ? { trigger_id: request.trigger_id } : {}),
      ...(request.command_id ? { command_id: request.command_id } : {}),
      event_id: event.id,
      event_time: event.event_time,
      concurrent,
      creation_time: time,
      status: 'created',
      spec: resource.spec,
      environment: request.environment,
      queued: mustQueue(store, event.project_id, name, concurrent),
      pending_tasks: pending ? tasks : undefined,
    };
    store.pipelines.insert(pipeline);
    writeInstances(store, pipeline, tasks, 0);
    return pipeline.id;
  });
}

/**
 * Writes the missing task instances of pipelines made by instantiatePipelines, a batch per
 * transaction with a turn of the event loop between batches, then lets their tasks run. What a
 * crash or a failure interrupts stays marked, and the scheduler completes it (at its start and
 * as it polls).
 */
export async function completeInstantiations(store: Store, pipelineIds: readonly string[]): Promise<void> {
  for (const id of pipelineIds) {
    for (;;) {
      const done = store.transaction(() => {
        const pending = store.pipelines.pendingInstantiation(id);
        if (!pending) return true;
        const written = store.tasks.countOfPipeline(id);
        const pipeline = { ...pending.pipeline, pending_tasks: pending.tasks };
        if (!writeInstances(store, pipeline, pending.tasks, written)) return false;
        store.pipelines.endInstantiation(id);
        // Counted afresh, not one hold less: a restart meanwhile (of a pipeline aborted while its
        // tasks were written) counted the tasks that existed then.
        store.tasks.recountBlockers(id);
        return true;
      });
      if (done) break;
      await nextTurn();
    }
  }
}

/**
 * completeInstantiations for a request whose pipelines are committed: a failure here (a busy
 * or full disk) must not turn the request's stored result into an error, whose retry would
 * make them twice; the scheduler completes what is left as it polls.
 */
export async function completeInstantiationsOfRequest(
  store: Store,
  pipelineIds: readonly string[],
): Promise<void> {
  await completeInstantiations(store, pipelineIds).catch(() => undefined);
}
