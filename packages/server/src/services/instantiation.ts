import type { Schemas } from '@pipewright/types';
import { newId } from '../domain/ids.js';
import { entryName } from '../domain/resource-pipelines.js';
import { entryLinks } from '../domain/task-graph.js';
import type { Store } from '../store/index.js';
import { mustQueue } from './pipeline-queue.js';

type Event = Schemas['Event'];

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

/**
 * Creates the pipelines of an event with every task instance in `created`, copying the
 * specs as they are now: later installs never change a pipeline already created. Runs
 * inside the caller's transaction; returns the new pipeline ids.
 */
export function instantiatePipelines(store: Store, request: Instantiation): string[] {
  const { event, time } = request;
  // Read once each, in this transaction: a pipeline of 200 entries often names one task 200 times.
  const read = new Map<string, Schemas['Resource']>();
  const resourceOf = <T extends Schemas['Resource']['spec']['type']>(type: T, name: string) => {
    const key = `${type}/${name}`;
    let resource = read.get(key);
    if (!resource) {
      resource = store.resources.getByTypeAndName(event.project_id, type, name);
      // Installs check every reference, so a missing one means the set changed meanwhile.
      if (!resource) throw new Error(`${type} ${name} of project ${event.project_id} is not installed`);
      read.set(key, resource);
    }
    return resource as Schemas['Resource'] & { spec: Extract<Schemas['ResourceSpec'], { type: T }> };
  };
  return request.pipelines.map((name) => {
    const pipeline = resourceOf('pipeline', name);
    const id = newId();
    const concurrent = pipeline.spec.data.concurrent ?? false;
    const queued = mustQueue(store, event.project_id, name, concurrent);
    store.pipelines.insert({
      id,
      org_id: event.org_id,
      project_id: event.project_id,
      name,
      pipeline_id: pipeline.id,
      ...(request.trigger_id ? { trigger_id: request.trigger_id } : {}),
      ...(request.command_id ? { command_id: request.command_id } : {}),
      event_id: event.id,
      event_time: event.event_time,
      concurrent,
      creation_time: time,
      status: 'created',
      spec: pipeline.spec,
      environment: request.environment,
      queued,
    });
    const entries = pipeline.spec.data.tasks;
    const links = entryLinks(entries.map((entry) => ({ ...entry, name: entryName(entry) })));
    for (const entry of entries) {
      const task = resourceOf('task', entry.task);
      const { blockers, dependents } = links.get(entryName(entry)) ?? { blockers: 0, dependents: [] };
      const scheduling = { blockers: blockers + (queued ? 1 : 0), dependents };
      for (let instance = 1; instance <= (entry.nb_instances ?? 1); instance += 1) {
        store.tasks.insert(
          {
            id: newId(),
            org_id: event.org_id,
            project_id: event.project_id,
            pipeline_id: id,
            task_id: task.id,
            name: entryName(entry),
            pipeline_task: entry,
            spec: task.spec,
            task_identities: task.spec.data.identities ?? [],
            dependencies: entry.dependencies ?? [],
            instance_id: instance,
            retry: 0,
            status: 'created',
            creation_time: time,
          },
          scheduling,
        );
      }
    }
    return id;
  });
}
