import type { Schemas } from '@pipewright/types';
import { type ExpressionBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { Status } from '../domain/execution/statuses.js';
import type { Dialect } from './dialect.js';
import type { DB, Tasks } from './generated/database.js';
import { paginate } from './paginate.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

type Task = Schemas['Task'];

type TaskRow = Selectable<Tasks>;

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
    status: row.status as Status,
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

/** The row of a task's pipeline that recounting its blockers reads (`p` below). */
interface PipelineHolds {
  queued: number;
  pending: SqlBool;
  released_through: string | null;
}

/** The tables of recounting: the tasks updated, and their pipeline's row as `p`. */
type Recounting = ExpressionBuilder<DB & { p: PipelineHolds }, 'tasks' | 'p'>;

/**
 * What holds a waiting task, counted afresh after a restart or as its pipeline's tasks are
 * released once all exist: the instances of its dependencies that did not end successfully or
 * failed with `on_failure: continue`, its pipeline's place in a queue, and, while tasks of its
 * pipeline are still to be written or it is not yet released (id past `released_through`), its
 * creation. The pipeline's row is read once per statement (`p`), not once per task: its spec
 * makes it large. CROSS JOIN makes SQLite read the task's dependencies first, then each one's
 * instances by (pipeline_id, name): left to choose, it read every task of the pipeline for each
 * task, which made a long chain quadratic (bench/README.md, stall). The join's terms are in WHERE,
 * as PostgreSQL's CROSS JOIN takes no ON; the creation counts 1 or 0 through CASE, as
 * PostgreSQL adds no booleans.
 */
function blockersNow(d: Dialect, eb: Recounting) {
  const unfinishedDependencies = eb
    .selectFrom(d.jsonStrings(eb.ref('tasks.dependencies'), 'd'))
    .crossJoin('tasks as u')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .whereRef('u.pipeline_id', '=', 'tasks.pipeline_id')
    .whereRef('u.name', '=', 'd.value')
    .where((eb) =>
      eb.not(
        eb.or([
          eb('u.status', '=', sql.lit('successful')),
          eb.and([
            eb('u.status', '=', sql.lit('failed')),
            eb(d.jsonText('u.pipeline_task', 'on_failure'), '=', sql.lit('continue')),
          ]),
        ]),
      ),
    );
  const unreleased = eb
    .case()
    .when(
      eb.and([
        eb.ref('p.pending'),
        eb.or([eb('p.released_through', 'is', null), eb('tasks.id', '>', eb.ref('p.released_through'))]),
      ]),
    )
    .then(eb.lit(1))
    .else(eb.lit(0))
    .end();
  return eb(eb(unfinishedDependencies, '+', eb.ref('p.queued')), '+', unreleased).$notNull();
}

function pipelineHolds(d: Dialect, pipelineId: string) {
  return d.q
    .selectFrom('pipelines')
    .select((eb) => ['queued', eb('pending_tasks', 'is not', null).as('pending'), 'released_through'])
    .where('id', '=', pipelineId)
    .as('p');
}

/** Counts afresh what holds each waiting task of a pipeline. Exported for the test of its plan. */
export function recountBlockersQuery(d: Dialect, pipelineId: string) {
  return d.q
    .updateTable('tasks')
    .from(pipelineHolds(d, pipelineId))
    .set((eb) => ({ blockers: blockersNow(d, eb) }))
    .where('tasks.pipeline_id', '=', pipelineId)
    .where('tasks.status', '=', sql.lit('created'));
}

/** The tasks of a project's pipeline whose ids are in (`after`, `last`]. */
export interface Slice {
  projectId: string;
  pipelineId: string;
  after: string;
  last: string;
}

/**
 * The same for the tasks of a slice, found through tasks_by_project_pipeline: a slice costs its
 * own tasks. Exported for the test of its plan.
 */
export function recountSliceQuery(d: Dialect, slice: Slice) {
  return d.q
    .updateTable(d.indexed('tasks', 'tasks_by_project_pipeline'))
    .from(pipelineHolds(d, slice.pipelineId))
    .set((eb) => ({ blockers: blockersNow(d, eb) }))
    .where('tasks.project_id', '=', slice.projectId)
    .where('tasks.pipeline_id', '=', slice.pipelineId)
    .where('tasks.id', '>', slice.after)
    .where('tasks.id', '<=', slice.last)
    .where('tasks.status', '=', sql.lit('created'));
}

/**
 * The next (at most) `size` tasks of a pipeline by id after `after`: how many, and the last id.
 * Exported for the test of its plan.
 */
export function nextSliceQuery(
  d: Dialect,
  projectId: string,
  pipelineId: string,
  after: string,
  size: number,
) {
  const slice = d.q
    .selectFrom('tasks')
    .select('id')
    .where('project_id', '=', projectId)
    .where('pipeline_id', '=', pipelineId)
    .where('id', '>', after)
    .orderBy('id')
    .limit(size)
    // PostgreSQL 15 names every subquery of a FROM.
    .as('s');
  return d.q
    .selectFrom(slice)
    .select((eb) => [eb.fn.countAll<number>().as('size'), eb.fn.max<string | null>('s.id').as('last')]);
}

export function createTaskStore(d: Dialect, x: Executor) {
  const { q } = d;
  const tasks = q.selectFrom('tasks');
  // The queries run per task, per pipeline or per request are built and compiled once
  // (prepared.ts): each call only gives their parameters.
  // Through the partial index tasks_started: the started tasks, whatever the size of the table.
  const leftBehind = prepared(2, (instance: string, running: readonly string[]) =>
    tasks
      .selectAll()
      .where('status', '=', sql.lit('started'))
      .where((eb) =>
        eb.or([
          eb('server_instance', 'is', null),
          eb.not(
            eb.exists(
              eb
                .selectFrom('server_instances')
                .select(sql.lit(1).as('found'))
                .whereRef('server_instances.id', '=', 'tasks.server_instance'),
            ),
          ),
          eb.and([eb('server_instance', '=', instance), eb.not(d.oneOf(eb.ref('tasks.id'), running))]),
        ]),
      ),
  );
  const runStates = prepared(1, (ids: readonly string[]) =>
    tasks
      .select(['id', 'status', 'retry', 'run', 'server_instance'])
      .where((eb) => d.oneOf(eb.ref('id'), ids)),
  );
  const insert = prepared(
    16,
    (
      id: string,
      orgId: string,
      projectId: string,
      pipelineId: string,
      taskId: string | null,
      name: string,
      pipelineTask: string,
      spec: string,
      taskIdentities: string,
      dependencies: string,
      instanceId: number,
      retry: number,
      status: string,
      creationTime: string,
      blockers: number,
      dependents: string,
    ) =>
      q.insertInto('tasks').values({
        id,
        org_id: orgId,
        project_id: projectId,
        pipeline_id: pipelineId,
        task_id: taskId,
        name,
        pipeline_task: pipelineTask,
        spec,
        task_identities: taskIdentities,
        dependencies,
        instance_id: instanceId,
        retry,
        status,
        creation_time: creationTime,
        blockers,
        dependents,
      }),
  );
  const get = prepared(2, (projectId: string, id: string) =>
    tasks.selectAll().where('project_id', '=', projectId).where('id', '=', id),
  );
  const ofPipeline = prepared(1, (pipelineId: string) =>
    tasks.selectAll().where('pipeline_id', '=', pipelineId).orderBy('name').orderBy('instance_id'),
  );
  // The oldest task that nothing holds (see migration 008) and that is due, through the partial
  // index tasks_ready, which holds only such tasks and those waiting for a retry: the scan stops
  // at the first one that can run, however large its pipeline or the queues of pipelines. The
  // index's terms are literals, as the planner matches them.
  const runnableQuery = (now: string, busy: readonly string[]) =>
    q
      .selectFrom(d.indexed('tasks', 'tasks_ready'))
      .selectAll()
      .where('status', '=', sql.lit('created'))
      .where('blockers', '=', sql.lit(0))
      .where((eb) => eb.or([eb('not_before', 'is', null), eb('not_before', '<=', now)]))
      .where((eb) => eb.not(d.oneOf(eb.ref('id'), busy)))
      .orderBy('creation_time')
      .orderBy('id')
      .limit(sql.lit(1));
  const runnable = prepared(2, runnableQuery);
  // A claim's read locks the row it claims, passing over those another claim holds.
  const claimableQuery = (now: string, busy: readonly string[]) =>
    runnableQuery(now, busy).$if(d.skipsLocked, (query) => query.forUpdate().skipLocked());
  const countOfPipeline = prepared(1, (pipelineId: string) =>
    tasks.select((eb) => eb.fn.countAll<number>().as('n')).where('pipeline_id', '=', pipelineId),
  );
  // Through tasks_by_pipeline (pipeline_id, name): the dependents' instances, nothing else.
  const unblockDependents = prepared(1, (id: string) =>
    q
      .updateTable('tasks')
      .set((eb) => ({ blockers: eb('blockers', '-', eb.lit(1)) }))
      .where('status', '=', sql.lit('created'))
      .where((eb) =>
        eb(
          eb.refTuple('pipeline_id', 'name'),
          'in',
          eb
            .selectFrom(['tasks as t', d.jsonStrings(sql.ref('t.dependents'), 'd')])
            .select(['t.pipeline_id', 'd.value'])
            .where('t.id', '=', id)
            .$asTuple('pipeline_id', 'value'),
        ),
      ),
  );
  const admitPipeline = prepared(1, (pipelineId: string) =>
    q
      .updateTable('tasks')
      .set((eb) => ({ blockers: eb('blockers', '-', eb.lit(1)) }))
      .where('pipeline_id', '=', pipelineId)
      .where('status', '=', sql.lit('created')),
  );
  const recountBlockers = prepared(1, (pipelineId: string) => recountBlockersQuery(d, pipelineId));
  const nextSlice = prepared(4, (projectId: string, pipelineId: string, after: string, size: number) =>
    nextSliceQuery(d, projectId, pipelineId, after, size),
  );
  const recountSlice = prepared(4, (projectId: string, pipelineId: string, after: string, last: string) =>
    recountSliceQuery(d, { projectId, pipelineId, after, last }),
  );
  // Through the partial index tasks_waiting, whose terms are literals here too.
  const nextDue = prepared(0, () =>
    tasks
      .select((eb) => eb.fn.min('not_before').as('not_before'))
      .where('status', '=', sql.lit('created'))
      .where('not_before', 'is not', null),
  );
  // Only by an instance that holds its lease: one whose lease another ended claims nothing.
  // A task starts for an instance that holds its lease only.
  const start = (time: string, instance: string) =>
    q
      .updateTable('tasks')
      .set({
        status: sql.lit('started'),
        start_time: time,
        end_time: sql.lit(null),
        not_before: sql.lit(null),
        server_instance: instance,
      })
      .where('status', '=', sql.lit('created'))
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('server_instances')
            .select(sql.lit(1).as('found'))
            .where('server_instances.id', '=', instance),
        ),
      );
  // The claim's read and write in one statement: one round trip under the write lock.
  const claimNext = prepared(3, (now: string, busy: readonly string[], instance: string) =>
    start(now, instance)
      .where('id', '=', claimableQuery(now, busy).clearSelect().select('id'))
      .returningAll(),
  );
  // Every end of an attempt names the attempt: a late report of an attempt already ended
  // (by an abort, say) changes nothing.
  const endAttempt = (id: string, attempt: number) =>
    q
      .updateTable('tasks')
      .where('id', '=', id)
      .where('status', '=', sql.lit('started'))
      .where('retry', '=', attempt);
  // Each returns the task's dependents: most tasks have none, and then nothing is unblocked.
  const markSuccessful = prepared(3, (id: string, attempt: number, time: string) =>
    endAttempt(id, attempt)
      .set({ status: sql.lit('successful'), end_time: time, failure_message: sql.lit(null) })
      .returning('dependents'),
  );
  const markFailed = prepared(4, (id: string, attempt: number, time: string, message: string) =>
    endAttempt(id, attempt)
      .set({ status: sql.lit('failed'), end_time: time, failure_message: message })
      .returning('dependents'),
  );
  const scheduleRetry = prepared(4, (id: string, attempt: number, notBefore: string, message: string) =>
    endAttempt(id, attempt).set((eb) => ({
      status: sql.lit('created'),
      retry: eb('retry', '+', eb.lit(1)),
      not_before: notBefore,
      failure_message: message,
      start_time: sql.lit(null),
      end_time: sql.lit(null),
    })),
  );
  const reset = prepared(1, (id: string) =>
    q
      .updateTable('tasks')
      .set((eb) => ({
        status: sql.lit('created'),
        run: eb('run', '+', eb.lit(1)),
        retry: sql.lit(0),
        start_time: sql.lit(null),
        end_time: sql.lit(null),
        failure_message: sql.lit(null),
        not_before: sql.lit(null),
      }))
      .where('id', '=', id),
  );
  const abortUnfinished = prepared(2, (pipelineId: string, time: string) =>
    q
      .updateTable('tasks')
      .set({ status: sql.lit('aborted'), end_time: time, not_before: sql.lit(null) })
      .where('pipeline_id', '=', pipelineId)
      .where('status', 'in', [sql.lit('created'), sql.lit('started')])
      .returning('id'),
  );
  return {
    /** A new task, in its first run (the column's default). */
    async insert(task: Omit<Task, 'run'>, scheduling: TaskScheduling): Promise<void> {
      await x.run(
        insert(
          task.id,
          task.org_id,
          task.project_id,
          task.pipeline_id,
          task.task_id ?? null,
          task.name,
          JSON.stringify(task.pipeline_task),
          JSON.stringify(task.spec),
          JSON.stringify(task.task_identities),
          JSON.stringify(task.dependencies),
          task.instance_id,
          task.retry,
          task.status,
          task.creation_time,
          scheduling.blockers,
          JSON.stringify(scheduling.dependents),
        ),
      );
    },
    async get(projectId: string, id: string): Promise<Task | undefined> {
      const row = await x.first(get(projectId, id));
      return row && toTask(row);
    },
    async ofPipeline(pipelineId: string): Promise<Task[]> {
      const rows = await x.all(ofPipeline(pipelineId));
      return rows.map(toTask);
    },
    list(projectId: string, filters: TaskFilters, request: PageRequest): Promise<Page<Task>> {
      let from = tasks.where('project_id', '=', projectId);
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
     * Whether a task can start now, but for `busy` ones (tasks whose last run is still ending: a
     * restart made them runnable again while their aborted process is stopped): a look that
     * locks nothing, before a claim.
     */
    async anyRunnable(now: string, busy: readonly string[]): Promise<boolean> {
      return (await x.first(runnable(now, busy))) !== undefined;
    },
    /** How many tasks the pipeline has. */
    async countOfPipeline(pipelineId: string): Promise<number> {
      const row = await x.first(countOfPipeline(pipelineId));
      return row?.n ?? 0;
    },
    /** The task ended in a way that lets the entries depending on it run: they wait for one instance less. */
    async unblockDependents(id: string): Promise<void> {
      await x.run(unblockDependents(id));
    },
    /** The waiting tasks of a pipeline are held once less: its queue admitted it. */
    async admitPipeline(pipelineId: string): Promise<void> {
      await x.run(admitPipeline(pipelineId));
    },
    /** Counts afresh what holds each waiting task of the pipeline (after a restart made tasks wait again). */
    async recountBlockers(pipelineId: string): Promise<void> {
      await x.run(recountBlockers(pipelineId));
    },
    /**
     * The next tasks of the pipeline by id after `afterId` (`''` for the first), at most `size`:
     * how many, and the last one's id; undefined when there are none.
     */
    async nextSlice(projectId: string, pipelineId: string, afterId: string, size: number) {
      const { size: found, last } = (await x.first(nextSlice(projectId, pipelineId, afterId, size))) ?? {
        size: 0,
        last: null,
      };
      return last === null ? undefined : { size: found, last };
    },
    /** Counts afresh what holds the waiting tasks of the pipeline whose ids are after `afterId`, up to `lastId`. */
    async recountSlice(
      projectId: string,
      pipelineId: string,
      afterId: string,
      lastId: string,
    ): Promise<void> {
      await x.run(recountSlice(projectId, pipelineId, afterId, lastId));
    },
    /**
     * Tasks marked started that nothing runs: those of instances without a lease (expired and
     * ended, or from before leases), and those of instance `instance` (the caller) that are not
     * among its `running` ones (a restart, or an end it could not record).
     */
    async leftBehind(instance: string, running: readonly string[]): Promise<Task[]> {
      return (await x.all(leftBehind(instance, running))).map(toTask);
    },
    /** Where each of the tasks `ids` stands, and the instance that claimed it; those gone are left out. */
    async runStates(ids: readonly string[]) {
      return await x.all(runStates(ids));
    },
    /** When the earliest task waiting for a retry is due, if any. */
    async nextDueTime(): Promise<string | undefined> {
      return (await x.first(nextDue()))?.not_before ?? undefined;
    },
    /**
     * Starts for `instance` the oldest task that can start at `now`, but for `busy` ones (see
     * anyRunnable); returns it, or undefined if none can start or `instance` holds no lease.
     */
    async claimNext(now: string, busy: readonly string[], instance: string): Promise<Task | undefined> {
      const row = await x.first(claimNext(now, busy, instance));
      return row && toTask(row);
    },
    /**
     * Ends the attempt a success; returns the names of the entries that depend on the task's,
     * or undefined if the attempt had ended already.
     */
    async markSuccessful(id: string, attempt: number, time: string): Promise<string[] | undefined> {
      const row = await x.first(markSuccessful(id, attempt, time));
      return row && (JSON.parse(row.dependents) as string[]);
    },
    /** Ends the attempt a failure for good; returns what markSuccessful does. */
    async markFailed(
      id: string,
      attempt: number,
      time: string,
      message: string,
    ): Promise<string[] | undefined> {
      const row = await x.first(markFailed(id, attempt, time, message));
      return row && (JSON.parse(row.dependents) as string[]);
    },
    async scheduleRetry(id: string, attempt: number, notBefore: string, message: string): Promise<boolean> {
      const { changes } = await x.run(scheduleRetry(id, attempt, notBefore, message));
      return changes === 1;
    },
    /** Back to `created` for the task's next run, from its first attempt: a restart. */
    async reset(ids: readonly string[]): Promise<void> {
      for (const id of ids) await x.run(reset(id));
    },
    /** Aborts every unfinished task of the pipeline; returns their ids. */
    async abortUnfinished(pipelineId: string, time: string): Promise<string[]> {
      const rows = await x.all(abortUnfinished(pipelineId, time));
      return rows.map((row) => row.id);
    },
  };
}
