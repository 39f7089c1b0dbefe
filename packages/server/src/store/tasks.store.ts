import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { Status } from '../domain/execution/statuses.js';
import type { Db } from './db.js';
import type { QueryBuilder } from './dialect.js';
import { paginate } from './paginate.js';
import type { Executor } from './sql.js';

type Task = Schemas['Task'];

interface TaskRow extends Record<string, unknown> {
  id: string;
  org_id: string;
  project_id: string;
  pipeline_id: string;
  task_id: string | null;
  name: string;
  pipeline_task: string;
  spec: string;
  task_identities: string;
  dependencies: string;
  instance_id: number;
  run: number;
  retry: number;
  status: Status;
  creation_time: string;
  start_time: string | null;
  end_time: string | null;
  failure_message: string | null;
  not_before: string | null;
}

/** What the scheduler keeps of a task beside what the API shows (migration 008). */
export interface TaskScheduling {
  /** Instances of its dependencies not ended in a way that lets it run, plus one while its pipeline is queued. */
  blockers: number;
  /** Names of the entries of its pipeline that depend on its entry. */
  dependents: readonly string[];
}

function toTask(row: TaskRow): Task {
  return {
    id: row.id,
    org_id: row.org_id,
    project_id: row.project_id,
    pipeline_id: row.pipeline_id,
    ...(row.task_id === null ? {} : { task_id: row.task_id }),
    name: row.name,
    pipeline_task: JSON.parse(row.pipeline_task),
    spec: JSON.parse(row.spec),
    task_identities: JSON.parse(row.task_identities),
    dependencies: JSON.parse(row.dependencies),
    instance_id: row.instance_id,
    run: row.run,
    retry: row.retry,
    status: row.status,
    creation_time: row.creation_time,
    ...(row.start_time === null ? {} : { start_time: row.start_time }),
    ...(row.end_time === null ? {} : { end_time: row.end_time }),
    ...(row.failure_message === null ? {} : { failure_message: row.failure_message }),
  };
}

export interface TaskFilters {
  pipeline_id?: string | undefined;
  status?: Status | undefined;
}

// The oldest task that nothing holds (see migration 008) and that is due, through the partial
// index tasks_ready, which holds only such tasks and those waiting for a retry: the scan stops
// at the first one that can run, however large its pipeline or the queues of pipelines.
const RUNNABLE = `
  SELECT * FROM tasks INDEXED BY tasks_ready
  WHERE status = 'created' AND blockers = 0 AND (not_before IS NULL OR not_before <= @now)
    AND id NOT IN (SELECT value FROM json_each(@busy))
  ORDER BY creation_time, id
  LIMIT 1`;

/**
 * What holds a waiting task, counted afresh after a restart or as its pipeline's tasks are
 * released once all exist: the instances of its dependencies that did not end successfully or
 * failed with `on_failure: continue`, its pipeline's place in a queue, and, while tasks of its
 * pipeline are still to be written or it is not yet released (id past `released_through`), its
 * creation. The pipeline's row is read once per statement (`p`), not once per task: its spec
 * makes it large. CROSS JOIN makes SQLite read the task's dependencies first, then each one's
 * instances by (pipeline_id, name): left to choose, it read every task of the pipeline for each
 * task, which made a long chain quadratic (bench/README.md, stall).
 */
const BLOCKERS_NOW = `(
    SELECT count(*) FROM json_each(tasks.dependencies) d
    CROSS JOIN tasks u ON u.pipeline_id = tasks.pipeline_id AND u.name = d.value
    WHERE NOT (u.status = 'successful'
               OR (u.status = 'failed' AND json_extract(u.pipeline_task, '$.on_failure') = 'continue')))
  + p.queued + (p.pending AND (p.released_through IS NULL OR tasks.id > p.released_through))`;

const PIPELINE_HOLDS = `(
    SELECT queued, pending_tasks IS NOT NULL AS pending, released_through FROM pipelines WHERE id = @pipeline_id) AS p`;

/** Counts afresh what holds each waiting task of a pipeline. Exported for the test of its plan. */
export const RECOUNT_BLOCKERS = `
  UPDATE tasks SET blockers = ${BLOCKERS_NOW}
  FROM ${PIPELINE_HOLDS}
  WHERE tasks.pipeline_id = @pipeline_id AND tasks.status = 'created'`;

/**
 * The same for the tasks of a project's pipeline whose ids are in (@after, @last], found
 * through tasks_by_project_pipeline: a slice costs its own tasks. Exported for the test of its plan.
 */
export const RECOUNT_SLICE = `
  UPDATE tasks INDEXED BY tasks_by_project_pipeline SET blockers = ${BLOCKERS_NOW}
  FROM ${PIPELINE_HOLDS}
  WHERE tasks.project_id = @project_id AND tasks.pipeline_id = @pipeline_id
    AND tasks.id > @after AND tasks.id <= @last AND tasks.status = 'created'`;

/** The next (at most) @size tasks of a pipeline by id after @after: how many, and the last id. Exported for the test of its plan. */
export const NEXT_SLICE = `
  SELECT count(*) AS size, max(id) AS last FROM (
    SELECT id FROM tasks
    WHERE project_id = @project_id AND pipeline_id = @pipeline_id AND id > @after
    ORDER BY id LIMIT @size)`;

export function createTaskStore(db: Db, q: QueryBuilder, x: Executor) {
  const insert = db.prepare(
    `INSERT INTO tasks (id, org_id, project_id, pipeline_id, task_id, name, pipeline_task, spec, task_identities,
                        dependencies, instance_id, retry, status, creation_time, blockers, dependents)
     VALUES (@id, @org_id, @project_id, @pipeline_id, @task_id, @name, @pipeline_task, @spec, @task_identities,
             @dependencies, @instance_id, @retry, @status, @creation_time, @blockers, @dependents)`,
  );
  const byId = db.prepare<[string, string], TaskRow>('SELECT * FROM tasks WHERE project_id = ? AND id = ?');
  const ofPipeline = db.prepare<[string], TaskRow>(
    'SELECT * FROM tasks WHERE pipeline_id = ? ORDER BY name, instance_id',
  );
  const runnable = db.prepare<{ now: string; busy: string }, TaskRow>(RUNNABLE);
  const started = db.prepare<[], TaskRow>(`SELECT * FROM tasks WHERE status = 'started'`);
  // Through the partial index tasks_unfinished: a pipeline's unfinished tasks, not all of its tasks.
  const anyUnfinished = db.prepare<[string], { found: number }>(
    `SELECT 1 AS found FROM tasks WHERE pipeline_id = ? AND status IN ('created', 'started') LIMIT 1`,
  );
  const anyUnsuccessful = db.prepare<[string], { found: number }>(
    `SELECT 1 AS found FROM tasks WHERE pipeline_id = ? AND status <> 'successful' LIMIT 1`,
  );
  // Through tasks_by_pipeline (pipeline_id, name): the dependents' instances, nothing else.
  const unblock = db.prepare<[string]>(
    `UPDATE tasks SET blockers = blockers - 1
     WHERE status = 'created' AND (pipeline_id, name) IN (
       SELECT t.pipeline_id, d.value FROM tasks t, json_each(t.dependents) d WHERE t.id = ?)`,
  );
  const admit = db.prepare<[string]>(
    `UPDATE tasks SET blockers = blockers - 1 WHERE pipeline_id = ? AND status = 'created'`,
  );
  const recountBlockers = db.prepare<{ pipeline_id: string }>(RECOUNT_BLOCKERS);
  const recountSlice = db.prepare<{ project_id: string; pipeline_id: string; after: string; last: string }>(
    RECOUNT_SLICE,
  );
  const nextSlice = db.prepare<
    { project_id: string; pipeline_id: string; after: string; size: number },
    { size: number; last: string | null }
  >(NEXT_SLICE);
  const countOfPipeline = db.prepare<[string], { n: number }>(
    'SELECT count(*) AS n FROM tasks WHERE pipeline_id = ?',
  );
  const nextDue = db.prepare<[], { not_before: string }>(
    `SELECT min(not_before) AS not_before FROM tasks WHERE status = 'created' AND not_before IS NOT NULL`,
  );
  const start = db.prepare(
    `UPDATE tasks SET status = 'started', start_time = @time, end_time = NULL, not_before = NULL
     WHERE id = @id AND status = 'created'`,
  );
  // Every end of an attempt names the attempt: a late report of an attempt already ended
  // (by an abort, say) changes nothing.
  const succeed = db.prepare(
    `UPDATE tasks SET status = 'successful', end_time = @time, failure_message = NULL
     WHERE id = @id AND status = 'started' AND retry = @retry`,
  );
  const fail = db.prepare(
    `UPDATE tasks SET status = 'failed', end_time = @time, failure_message = @message
     WHERE id = @id AND status = 'started' AND retry = @retry`,
  );
  const retry = db.prepare(
    `UPDATE tasks SET status = 'created', retry = retry + 1, not_before = @not_before, failure_message = @message,
                      start_time = NULL, end_time = NULL
     WHERE id = @id AND status = 'started' AND retry = @retry`,
  );
  const abortUnfinished = db.prepare<{ pipeline_id: string; time: string }, { id: string }>(
    `UPDATE tasks SET status = 'aborted', end_time = @time, not_before = NULL
     WHERE pipeline_id = @pipeline_id AND status IN ('created', 'started')
     RETURNING id`,
  );
  const reset = db.prepare(
    `UPDATE tasks SET status = 'created', run = run + 1, retry = 0, start_time = NULL, end_time = NULL,
                      failure_message = NULL, not_before = NULL
     WHERE id = ?`,
  );
  return {
    /** A new task, in its first run (the column's default). */
    insert(task: Omit<Task, 'run'>, scheduling: TaskScheduling): void {
      insert.run({
        task_id: null,
        ...task,
        blockers: scheduling.blockers,
        dependents: JSON.stringify(scheduling.dependents),
        pipeline_task: JSON.stringify(task.pipeline_task),
        spec: JSON.stringify(task.spec),
        task_identities: JSON.stringify(task.task_identities),
        dependencies: JSON.stringify(task.dependencies),
      });
    },
    get(projectId: string, id: string): Task | undefined {
      const row = byId.get(projectId, id);
      return row && toTask(row);
    },
    ofPipeline(pipelineId: string): Task[] {
      return ofPipeline.all(pipelineId).map(toTask);
    },
    list(projectId: string, filters: TaskFilters, request: PageRequest): Promise<Page<Task>> {
      let from = q.selectFrom('tasks').where('project_id', '=', projectId);
      if (filters.pipeline_id !== undefined) from = from.where('pipeline_id', '=', filters.pipeline_id);
      if (filters.status !== undefined) from = from.where('status', '=', filters.status);
      return paginate(x, {
        from,
        sorts: { id: 'id', creation_time: 'creation_time' },
        request,
        toElement: toTask,
      });
    },
    /**
     * The oldest task that can start now, but for `busy` ones: tasks whose last run is still
     * ending (a restart made them runnable again while their aborted process is stopped).
     */
    nextRunnable(now: string, busy: readonly string[]): Task | undefined {
      const row = runnable.get({ now, busy: JSON.stringify(busy) });
      return row && toTask(row);
    },
    /** How many tasks the pipeline has. */
    countOfPipeline(pipelineId: string): number {
      return countOfPipeline.get(pipelineId)?.n ?? 0;
    },
    /** Whether a task of the pipeline is waiting or running. */
    anyUnfinished(pipelineId: string): boolean {
      return anyUnfinished.get(pipelineId) !== undefined;
    },
    /** Whether a task of the pipeline did not (or not yet) succeed. */
    anyUnsuccessful(pipelineId: string): boolean {
      return anyUnsuccessful.get(pipelineId) !== undefined;
    },
    /** The task ended in a way that lets the entries depending on it run: they wait for one instance less. */
    unblockDependents(id: string): void {
      unblock.run(id);
    },
    /** The waiting tasks of a pipeline are held once less: its queue admitted it. */
    admitPipeline(pipelineId: string): void {
      admit.run(pipelineId);
    },
    /** Counts afresh what holds each waiting task of the pipeline (after a restart made tasks wait again). */
    recountBlockers(pipelineId: string): void {
      recountBlockers.run({ pipeline_id: pipelineId });
    },
    /**
     * The next tasks of the pipeline by id after `afterId` (`''` for the first), at most `size`:
     * how many, and the last one's id; undefined when there are none.
     */
    nextSlice(projectId: string, pipelineId: string, afterId: string, size: number) {
      const { size: found, last } = nextSlice.get({
        project_id: projectId,
        pipeline_id: pipelineId,
        after: afterId,
        size,
      }) ?? { size: 0, last: null };
      return last === null ? undefined : { size: found, last };
    },
    /** Counts afresh what holds the waiting tasks of the pipeline whose ids are after `afterId`, up to `lastId`. */
    recountSlice(projectId: string, pipelineId: string, afterId: string, lastId: string): void {
      recountSlice.run({ project_id: projectId, pipeline_id: pipelineId, after: afterId, last: lastId });
    },
    /** Tasks marked running: after a crash, those the dead process left behind. */
    started(): Task[] {
      return started.all().map(toTask);
    },
    /** When the earliest task waiting for a retry is due, if any. */
    nextDueTime(): string | undefined {
      return nextDue.get()?.not_before ?? undefined;
    },
    markStarted(id: string, time: string): boolean {
      return start.run({ id, time }).changes === 1;
    },
    markSuccessful(id: string, attempt: number, time: string): boolean {
      return succeed.run({ id, retry: attempt, time }).changes === 1;
    },
    markFailed(id: string, attempt: number, time: string, message: string): boolean {
      return fail.run({ id, retry: attempt, time, message }).changes === 1;
    },
    scheduleRetry(id: string, attempt: number, notBefore: string, message: string): boolean {
      return retry.run({ id, retry: attempt, not_before: notBefore, message }).changes === 1;
    },
    /** Back to `created` for the task's next run, from its first attempt: a restart. */
    reset(ids: readonly string[]): void {
      for (const id of ids) reset.run(id);
    },
    /** Aborts every unfinished task of the pipeline; returns their ids. */
    abortUnfinished(pipelineId: string, time: string): string[] {
      return abortUnfinished.all({ pipeline_id: pipelineId, time }).map((row) => row.id);
    },
  };
}
