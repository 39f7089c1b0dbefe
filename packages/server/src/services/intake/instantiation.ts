import type { Schemas } from '@pipewright/types';
import { type EntryLinks, entryLinks } from '../../domain/execution/task-graph.js';
import { newId } from '../../domain/ids.js';
import { entryName } from '../../domain/resources/pipelines.js';
import type { PipelineRecord, Store, Tables } from '../../store/index.js';
import { nextTurn } from '../concurrency/time-slices.js';
import { mustQueue } from './pipeline-queue.js';

type Event = Schemas['Event'];
type Resource = Schemas['Resource'];
type PipelineTask = Schemas['PipelineTask'];

/**
 * Task instances written in one transaction. A pipeline with more gets the first ones in the
 * transaction that makes it and the rest in transactions of this size, with a turn of the
 * event loop between them (completeInstantiations): every transaction holds the server's one
 * thread, so one transaction for all of a large pipeline's tasks would stall every request.
 */
export const INSTANTIATION_BATCH = 200;

/**
 * Tasks released in one transaction once all exist: counted afresh, they cost a fraction of
 * a write each (see completionStep).
 */
export const RELEASE_SLICE = 1000;

export interface Instantiation {
  event: Event;
  /** Names of the pipeline resources to instantiate, in the event's project. */
  pipelines: readonly string[];
  trigger_id?: string;
  command_id?: string;
  /** Variables for every task (from command parameters). */
  environment: Record<string, string>;
  time: string;
  /**
   * Resources of the project read in this transaction already, which the pipelines may name: those
   * they name are not read again.
   */
  known?: readonly Resource[];
}

/**
 * What writing the task instances of a pipeline needs, worked out once per pipeline rather
 * than once per batch: the instances in the order they are written (entry by entry, instance
 * by instance), the links of each entry, and the task resources the pipeline was made with.
 */
interface InstancePlan {
  instances: { entry: PipelineTask; name: string; instance: number }[];
  links: Map<string, EntryLinks>;
  tasks: Record<string, Resource>;
}

function planInstances(spec: Schemas['PipelineSpec'], tasks: Record<string, Resource>): InstancePlan {
  // Plain loops and small objects: a pipeline may have 10,000 entries, planned in a request.
  const instances: InstancePlan['instances'] = [];
  const graph = spec.data.tasks.map((entry) => {
    const name = entryName(entry);
    const count = entry.nb_instances ?? 1;
    for (let instance = 1; instance <= count; instance++) instances.push({ entry, name, instance });
    return { name, dependencies: entry.dependencies, nb_instances: count };
  });
  return { instances, links: entryLinks(graph), tasks };
}

/**
 * Writes the task instances of `pipeline` from the `from`-th, at most INSTANTIATION_BATCH of
 * them; returns how many are written then. While its tasks are written (`pending_tasks`) each
 * one is held once more (see migration 010), so that none runs before all exist; a pipeline
 * aborted meanwhile gets its missing tasks aborted.
 */
async function writeInstances(
  tx: Tables,
  pipeline: PipelineRecord,
  plan: InstancePlan,
  from: number,
): Promise<number> {
  const to = Math.min(plan.instances.length, from + INSTANTIATION_BATCH);
  const held = (pipeline.queued ? 1 : 0) + (pipeline.pending_tasks ? 1 : 0);
  const aborted = pipeline.status === 'aborted';
  for (const { entry, name, instance } of plan.instances.slice(from, to)) {
    const task = plan.tasks[entry.task] as Resource & { spec: Schemas['TaskSpec'] };
    const { blockers, dependents } = plan.links.get(name) ?? { blockers: 0, dependents: [] };
    await tx.tasks.insert(
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
  return to;
}

/**
 * Creates the pipelines of an event with their task instances in `created`, copying the specs
 * as they are now: later installs never change a pipeline already created. Runs inside the
 * caller's transaction; returns the new pipeline ids, the ids of the resources it read them
 * from, and those of the pipelines left pending: a
 * pipeline of more than INSTANTIATION_BATCH instances gets only its first ones here, and
 * completeInstantiations writes the rest once the caller's transaction has committed.
 */
export async function instantiatePipelines(
  tx: Tables,
  request: Instantiation,
): Promise<{ ids: string[]; pending: string[]; resourceIds: string[] }> {
  const { event, time } = request;
  // Read once each, in this transaction: a pipeline of 200 entries often names one task 200 times.
  const read = new Map<string, Resource>(
    (request.known ?? []).map((r) => [`${r.spec.type}/${r.spec.name}`, r]),
  );
  const used = new Set<string>();
  const resourceOf = async <T extends Resource['spec']['type']>(type: T, name: string) => {
    const key = `${type}/${name}`;
    let resource = read.get(key);
    if (!resource) {
      resource = await tx.resources.getByTypeAndName(event.project_id, type, name);
      // Installs check every reference, so a missing one means the set changed meanwhile.
      if (!resource) throw new Error(`${type} ${name} of project ${event.project_id} is not installed`);
      read.set(key, resource);
    }
    used.add(resource.id);
    return resource as Resource & { spec: Extract<Schemas['ResourceSpec'], { type: T }> };
  };
  const ids: string[] = [];
  const pending: string[] = [];
  for (const name of request.pipelines) {
    const resource = await resourceOf('pipeline', name);
    const concurrent = resource.spec.data.concurrent ?? false;
    const tasks: Record<string, Resource> = {};
    for (const entry of resource.spec.data.tasks) tasks[entry.task] = await resourceOf('task', entry.task);
    const plan = planInstances(resource.spec, tasks);
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
      queued: await mustQueue(tx, event.project_id, name, concurrent),
      pending_tasks: plan.instances.length > INSTANTIATION_BATCH ? tasks : undefined,
    };
    await tx.pipelines.insert(pipeline);
    await writeInstances(tx, pipeline, plan, 0);
    ids.push(pipeline.id);
    if (pipeline.pending_tasks) pending.push(pipeline.id);
  }
  return { ids, pending, resourceIds: [...used] };
}

/**
 * What is read once across the steps of one completion, and what a step asks of the next
 * turn: the planner's statistics of the tasks, gathered outside any transaction.
 */
interface Progress {
  plan?: InstancePlan;
  pipeline?: PipelineRecord;
  written: number;
  statistics?: 'wanted' | 'gathered';
}

/**
 * One step of completing pending pipeline `id`, in the caller's transaction: the next batch of
 * its missing tasks, or once all exist the next slice of them released, each counted afresh
 * without the hold of its creation, in the order of their ids. Counted afresh, not one hold
 * less: a restart meanwhile (of a pipeline aborted while its tasks were written) counted the
 * tasks that existed then. The last slice ends the pipeline's instantiation; returns whether
 * it has ended. `progress` carries what is read once across the steps of one completion.
 */
async function completionStep(tx: Tables, id: string, progress: Progress): Promise<boolean> {
  // What may have changed since the last step: an abort, a restart, an admission from a queue.
  const state = await tx.pipelines.pendingState(id);
  if (!state) return true;
  if (!progress.pipeline || !progress.plan) {
    const pending = await tx.pipelines.pendingInstantiation(id);
    if (!pending) return true;
    progress.pipeline = pending.pipeline;
    progress.plan = planInstances(pending.pipeline.spec, pending.tasks);
    progress.written = await tx.tasks.countOfPipeline(id);
  }
  const { plan } = progress;
  const pipeline = { ...progress.pipeline, ...state, pending_tasks: plan.tasks };
  if (progress.written < plan.instances.length) {
    progress.written = await writeInstances(tx, pipeline, plan, progress.written);
    return false;
  }
  const after = state.released_through ?? '';
  const slice = await tx.tasks.nextSlice(pipeline.project_id, id, after, RELEASE_SLICE);
  if (slice) {
    // Before the first release of a pipeline this large: its tasks, just written, may be most of
    // the table, and a planner unaware of them made each recount read them all for each task.
    if (after === '' && plan.instances.length >= RELEASE_SLICE && progress.statistics !== 'gathered') {
      progress.statistics = 'wanted';
      return false;
    }
    await tx.pipelines.releaseThrough(id, slice.last);
    await tx.tasks.recountSlice(pipeline.project_id, id, after, slice.last);
    if (slice.size === RELEASE_SLICE) return false;
  }
  await tx.pipelines.endInstantiation(id);
  return true;
}

/**
 * Completions under way in this process, by pipeline. The request that made a pipeline and
 * the scheduler's look for pending ones may both ask for one, on connections of their own:
 * two completions alternating would run two transactions in each turn of the event loop.
 */
const underWay = new Map<string, Promise<void>>();

async function complete(store: Store, id: string): Promise<void> {
  // Counted once: this completion is the only writer of the pipeline's tasks (see underWay).
  const progress: Progress = { written: 0 };
  for (;;) {
    await nextTurn();
    if (progress.statistics === 'wanted') {
      // Between transactions: no writer waits for it.
      await store.refreshStatistics('tasks');
      progress.statistics = 'gathered';
    }
    if (await store.transaction((tx) => completionStep(tx, id, progress))) return;
  }
}

/**
 * Writes the missing task instances of pipelines made by instantiatePipelines, a batch per
 * transaction with turns of the event loop between batches, then lets their tasks run, a slice
 * at a time. What a crash or a failure interrupts stays marked, and the scheduler completes it
 * (at its start and as it polls).
 */
export async function completeInstantiations(store: Store, pipelineIds: readonly string[]): Promise<void> {
  for (const id of pipelineIds) {
    let completion = underWay.get(id);
    if (!completion) {
      completion = complete(store, id).finally(() => underWay.delete(id));
      underWay.set(id, completion);
    }
    await completion;
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
