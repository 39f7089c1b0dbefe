import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError } from '../domain/errors.js';
import { isFinished } from '../domain/execution/statuses.js';
import { tasksToRerun } from '../domain/execution/task-graph.js';
import { formatTime } from '../domain/time.js';
import type { PipelineFilters, Store, Tables } from '../store/index.js';
import { finishPipeline, mustQueue } from './intake/pipeline-queue.js';
import type { WorkNotifier } from './work.js';

type Pipeline = Schemas['Pipeline'];
type Project = Schemas['Project'];

// Each control operation is one transaction that checks the status it requires: of two
// racing calls, the second sees the first's result and gets its 409.
export function createPipelineService(store: Store, work: WorkNotifier, clock: () => Date) {
  /** The pipeline, read through `tables`: those of the transaction, inside one. */
  const get = async (project: Project, id: string, tables: Tables = store): Promise<Pipeline> => {
    const pipeline = await tables.pipelines.get(project.id, id);
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
  const rerun = async (tx: Tables, pipeline: Pipeline, taskIds: readonly string[]) => {
    const time = formatTime(clock());
    for (const id of taskIds) await tx.stepExecutions.abortStarted(id, time);
    await tx.tasks.reset(taskIds);
    await tx.pipelines.reset(
      pipeline.id,
      await mustQueue(tx, pipeline.project_id, pipeline.name, pipeline.concurrent),
    );
    await tx.tasks.recountBlockers(pipeline.id);
  };

  return {
    get,
    list(project: Project, filters: PipelineFilters, request: PageRequest): Promise<Page<Pipeline>> {
      return store.pipelines.list(project.id, filters, request);
    },

    /** Unfinished tasks and the pipeline become `aborted` now; their processes are then stopped. */
    async abort(project: Project, id: string): Promise<void> {
      const stopped = await store.transaction(async (tx) => {
        const pipeline = await get(project, id, tx);
        if (isFinished(pipeline.status)) {
          throw new DomainError('pipeline_finished', `pipeline ${id} is already ${pipeline.status}`, {
            status: pipeline.status,
          });
        }
        const time = formatTime(clock());
        const aborted = await tx.tasks.abortUnfinished(id, time);
        await finishPipeline(tx, id, 'aborted', time);
        return aborted;
      });
      work.stopTasks(stopped);
    },

    /** Every task runs again from scratch, with an empty scratchpad. */
    async restart(project: Project, id: string): Promise<void> {
      await store.transaction(async (tx) => {
        const pipeline = await get(project, id, tx);
        requireFinished(pipeline);
        await rerun(
          tx,
          pipeline,
          (await tx.tasks.ofPipeline(id)).map((task) => task.id),
        );
        await tx.scratchpads.clear(id);
      });
      work.wakeUp();
    },

    /** Failed and aborted tasks, and those depending on them, run again; the rest stays. */
    async restartFromFailure(project: Project, id: string): Promise<void> {
      await store.transaction(async (tx) => {
        const pipeline = await get(project, id, tx);
        requireFinished(pipeline);
        if (pipeline.status === 'successful') {
          throw new DomainError('pipeline_not_failed', `pipeline ${id} succeeded: nothing to run again`, {
            status: pipeline.status,
          });
        }
        await rerun(tx, pipeline, tasksToRerun(await tx.tasks.ofPipeline(id)));
      });
      work.wakeUp();
    },
  };
}

export type PipelineService = ReturnType<typeof createPipelineService>;
