import type { Schemas } from '@pipewright/types';
import type { Status } from '../../domain/execution/statuses.js';
import type { Change, Tables } from '../../store/index.js';
import type { StreamMessage } from './stream-types.js';

/** Which changes a project stream sends; events have neither pipeline nor status. */
export interface ChangeFilters {
  pipeline_id?: string | undefined;
  pipeline_name?: string | undefined;
  status?: Status | undefined;
}

/** A changed object, read once per batch and serialized once for every stream of its project. */
export interface ChangedObject {
  seq: number;
  kind: 'pipeline' | 'task' | 'event';
  /** Its message, one object for every stream that sends it (the HTTP layer frames it once). */
  message: StreamMessage;
  /** The pipeline it is or belongs to; none for events. */
  pipelineId?: string;
  status?: Status;
  /** The name of that pipeline, read only when a stream of its project filters on it. */
  pipelineName?: string | undefined;
}

const SHOWN = new Set<string>(['pipeline', 'task', 'event']);

/**
 * The objects that `changes` (of one project, in order) changed, as they are now, each once,
 * at the place of its last change: several changes of an object read in one go show as one, its
 * latest state. Objects deleted since (their project, or by retention) are left out. With
 * `withNames`, each has the name of its pipeline too.
 */
export async function changedObjects(
  store: Tables,
  projectId: string,
  changes: readonly Change[],
  withNames: boolean,
): Promise<ChangedObject[]> {
  const last = new Map<string, Change>();
  for (const change of changes) {
    if (change.project_id === projectId && SHOWN.has(change.kind))
      last.set(`${change.kind}:${change.id}`, change);
  }
  const names = new Map<string, string | undefined>();
  const objects: ChangedObject[] = [];
  for (const change of [...last.values()].sort((a, b) => a.seq - b.seq)) {
    const seq = change.seq;
    if (change.kind === 'event') {
      const event = await store.events.get(projectId, change.id);
      if (event) objects.push({ seq, kind: 'event', message: messageOf('event', seq, event) });
      continue;
    }
    let pipelineId: string;
    let object: Schemas['Pipeline'] | Schemas['Task'] | undefined;
    if (change.kind === 'pipeline') {
      const pipeline = await store.pipelines.get(projectId, change.id);
      if (pipeline) names.set(pipeline.id, pipeline.name);
      object = pipeline;
      pipelineId = change.id;
    } else {
      object = await store.tasks.get(projectId, change.id);
      pipelineId = object?.pipeline_id ?? '';
    }
    if (!object) continue;
    objects.push({
      seq,
      kind: change.kind as 'pipeline' | 'task',
      message: messageOf(change.kind as 'pipeline' | 'task', seq, object),
      pipelineId,
      status: object.status,
    });
  }
  if (withNames) {
    for (const object of objects) {
      const { pipelineId } = object;
      if (pipelineId === undefined) continue;
      if (!names.has(pipelineId)) {
        names.set(pipelineId, (await store.pipelines.get(projectId, pipelineId))?.name);
      }
      object.pipelineName = names.get(pipelineId);
    }
  }
  return objects;
}

const messageOf = (event: ChangedObject['kind'], seq: number, object: unknown): StreamMessage => ({
  event,
  id: String(seq),
  data: JSON.stringify(object),
});

/** Whether a stream with `filters` sends `object`. */
export function matches(object: ChangedObject, filters: ChangeFilters): boolean {
  const filtered =
    filters.pipeline_id !== undefined || filters.pipeline_name !== undefined || filters.status !== undefined;
  if (object.pipelineId === undefined) return !filtered;
  return (
    (filters.pipeline_id === undefined || object.pipelineId === filters.pipeline_id) &&
    (filters.status === undefined || object.status === filters.status) &&
    (filters.pipeline_name === undefined || object.pipelineName === filters.pipeline_name)
  );
}
