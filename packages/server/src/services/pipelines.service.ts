import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import { isFinished } from '../domain/execution/statuses.js';
import { tasksToRerun } from '../domain/execution/task-graph.js';
import { formatTime } from '../domain/time.js';
import type { PipelineFilters, Store } from '../store/index.js';
import { finishPipeline, mustQueue } from './intake/pipeline-queue.js';
import type { WorkNotifier } from './work.js';

type Pipeline = Schemas['Pipeline'];
type Project = Schemas['Project'];

// Each control operation is one transaction that checks the status it requires: of two
// racing calls, the second sees the first's result and gets its 409.
export function createPipelineService(store: Store, work: WorkNotifier, clock: () => Date) {
  const get = (project: Project, id: string): Pipeline => {
    const pipeline = store.pipelines.get(project.id, id);
    if (!pipeline) throw new DomainError('unknown_pipeline', `no pipeline ${id}`, { id });
    return pipeline;
  };

  const requireFinished = (pipeline: Pipeline) => {
    if (!isFinished(pipeline.status)) {
      throw new DomainError(
        'pipeline_not_finished',
        `pipeline ${pipeline.id} is ${pipeline.status}, not finished`,
        {
          status: pipeline.status,
        },
      );
    }
  };

  /**
   * Puts tasks back to `created` for their next run, and the pipeline too: queued (the oldest
   * there, so first to be admitted) if another of its name runs. The step executions of their
   * earlier runs stay; those still started (their processes being stopped after an abort) are
   * aborted now, as the writes of those processes will no longer be recorded.
   */
  const rerun = (pipeline: Pipeline, taskIds: readonly string[]) => {
    const time = formatTime(clock());
    for (const id of taskIds) store.stepExecutions.abortStarted(id, time);
    store.tasks.reset(taskIds);
    store.pipelines.reset(
      pipeline.id,
      mustQueue(store, pipeline.project_id, pipeline.name, pipeline.concurrent),
    );
    store.tasks.recountBlockers(pipeline.id);
  };

  return {
    get,
    list(project: Project, filters: PipelineFilters, request: PageRequest): Page<Pipeline> {
      return store.pipelines.list(project.id, filters, request);
    },

    /** Unfinished tasks and the pipeline become `aborted` now; their processes are then stopped. */
    abort(project: Project, id: string): void {
      const stopped = store.transaction(() => {
        const pipeline = get(project, id);
        if (isFinished(pipeline.status)) {
          throw new DomainError('pipeline_finished', `pipeline ${id} is already ${pipeline.status}`, {
            status: pipeline.status,
          });
        }
        const time = formatTime(clock());
        const aborted = store.tasks.abortUnfinished(id, time);
        finishPipeline(store, id, 'aborted', time);
        return aborted;
      });
      work.stopTasks(stopped);
    },

    /** Every task runs again from scratch, with an empty scratchpad. */
    restart(project: Project, id: string): void {
      store.transaction(() => {
        const pipeline = get(project, id);
        requireFinished(pipeline);
        rerun(
          pipeline,
          store.tasks.ofPipeline(id).map((task) => task.id),
        );
        store.scratchpads.clear(id);
      });
      work.wakeUp();
    },

    /** Failed and aborted tasks, and those depending on them, run again; the rest stays. */
    restartFromFailure(project: Project, id: string): void {
      store.transaction(() => {
        const pipeline = get(project, id);
        requireFinished(pipeline);
        if (pipeline.status === 'successful') {
          throw new DomainError('pipeline_not_failed', `pipeline ${id} succeeded: nothing to run again`, {
            status: pipeline.status,
          });
        }
        rerun(pipeline, tasksToRerun(store.tasks.ofPipeline(id)));
      });
      work.wakeUp();
    },
  };
}

export type PipelineService = ReturnType<typeof createPipelineService>;
