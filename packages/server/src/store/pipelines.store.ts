import type { Schemas } from '@pipewright/types';
import { type Selectable, sql } from 'kysely';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { Status } from '../domain/execution/statuses.js';
import type { Dialect } from './dialect.js';
import { toEvent } from './events.store.js';
import type { Pipelines } from './generated/database.js';
import { paginate } from './paginate.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

type Pipeline = Schemas['Pipeline'];
type Event = Schemas['Event'];
type Project = Schemas['Project'];

/** A pipeline with what it was instantiated with, which the API does not show. */
export interface PipelineRecord extends Pipeline {
  spec: Schemas['PipelineSpec'];
  /** Variables every task of the pipeline gets (from its command's parameters). */
  environment: Record<string, string>;
  /** Waiting for the unfinished pipeline of its non-concurrent resource to end (migration 008). */
  queued: boolean;
  /** While its tasks are created a batch at a time: the task resources it was made with, by name. */
  pending_tasks?: Record<string, Schemas['Resource']> | undefined;
}

/** What creating the rest of a pipeline's tasks needs (migration 010). */
export interface PendingInstantiation {
  pipeline: PipelineRecord;
  tasks: Record<string, Schemas['Resource']>;
}

/** What may change while a pipeline's tasks are created and released (migrations 010, 019). */
export interface PendingState {
  status: Status;
  end_time?: string;
  queued: boolean;
  /** The largest id of its tasks released so far, once all exist. */
  released_through?: string;
}

/** A row of pipelines, its status one of the statuses. */
type PipelineRow = Omit<Selectable<Pipelines>, 'status'> & { status: Status };

function toPipeline(row: PipelineRow): Pipeline {
  return {
    id: row.id,
    org_id: row.org_id,
    project_id: row.project_id,
    name: row.name,
    ...(row.pipeline_id === null ? {} : { pipeline_id: row.pipeline_id }),
    ...(row.trigger_id === null ? {} : { trigger_id: row.trigger_id }),
    ...(row.command_id === null ? {} : { command_id: row.command_id }),
    event_id: row.event_id,
    event_time: row.event_time,
    concurrent: row.concurrent === 1,
    creation_time: row.creation_time,
    ...(row.start_time === null ? {} : { start_time: row.start_time }),
    ...(row.end_time === null ? {} : { end_time: row.end_time }),
    status: row.status,
  };
}

/** What a list of pipelines may be narrowed to; each filter given must hold. */
export interface PipelineFilters {
  status?: Status | undefined;
  eventId?: string | undefined;
  name?: string | undefined;
  triggerId?: string | undefined;
  commandId?: string | undefined;
  /** Canonical UTC times (formatTime): created at or after `createdSince`, before `createdBefore`. */
  createdSince?: string | undefined;
  createdBefore?: string | undefined;
}

// Each filter's condition; each is served by an index that starts with (project_id, column)
// or, for the period, by pipelines_by_project_creation_time (migration 016; the plans are
// checked by test/unit/store/pipeline-queries.test.ts).
const FILTER_CONDITIONS = {
  status: ['status', '='],
  eventId: ['event_id', '='],
  name: ['name', '='],
  triggerId: ['trigger_id', '='],
  commandId: ['command_id', '='],
  createdSince: ['creation_time', '>='],
  createdBefore: ['creation_time', '<'],
} as const satisfies Record<keyof PipelineFilters, readonly [keyof Pipelines, '=' | '>=' | '<']>;

/**
 * The index a list must read when it is filtered by name, trigger or command. Without table
 * statistics SQLite prefers an index that yields the sort order over one that narrows the rows,
 * and would walk every pipeline of the project to find the few of one name. The event's own
 * index (pipelines_by_event) narrows more: it is left to the planner.
 */
function filterIndex(filters: PipelineFilters): string | undefined {
  if (filters.eventId !== undefined) return undefined;
  if (filters.name !== undefined) return 'pipelines_by_project_name';
  if (filters.triggerId !== undefined) return 'pipelines_by_project_trigger';
  if (filters.commandId !== undefined) return 'pipelines_by_project_command';
  return undefined;
}

/** A pipeline just ended: what names its queue, its status, and whether its spec names notifications. */
export interface EndedPipeline {
  project_id: string;
  name: string;
  concurrent: boolean;
  status: 'successful' | 'failed' | 'aborted';
  /** Most specs name none, and their end needs no more reads. */
  notifies: boolean;
}

function endedOf(
  row:
    | { project_id: string; name: string; concurrent: number; status: string; notifications: string | null }
    | undefined,
): EndedPipeline | undefined {
  return (
    row && {
      project_id: row.project_id,
      name: row.name,
      concurrent: row.concurrent === 1,
      status: row.status as EndedPipeline['status'],
      notifies: row.notifications !== null,
    }
  );
}

export function createPipelineStore(d: Dialect, x: Executor) {
  const { q } = d;
  const pipelines = q.selectFrom('pipelines');
  const unfinished = [sql.lit('created'), sql.lit('started')];
  const insert = prepared(
    16,
    (
      id: string,
      orgId: string,
      projectId: string,
      name: string,
      pipelineId: string | null,
      triggerId: string | null,
      commandId: string | null,
      eventId: string,
      eventTime: string,
      concurrent: number,
      creationTime: string,
      status: Status,
      spec: string,
      environment: string,
      queued: number,
      pendingTasks: string | null,
    ) =>
      q.insertInto('pipelines').values({
        id,
        org_id: orgId,
        project_id: projectId,
        name,
        pipeline_id: pipelineId,
        trigger_id: triggerId,
        command_id: commandId,
        event_id: eventId,
        event_time: eventTime,
        concurrent,
        creation_time: creationTime,
        status,
        spec,
        environment,
        queued,
        pending_tasks: pendingTasks,
      }),
  );
  const byId = prepared(2, (projectId: string, id: string) =>
    pipelines.selectAll().where('project_id', '=', projectId).where('id', '=', id),
  );
  const runContext = prepared(1, (id: string) =>
    q
      .selectFrom('pipelines')
      .innerJoin('events', 'events.id', 'pipelines.event_id')
      .innerJoin('projects', 'projects.id', 'pipelines.project_id')
      .selectAll('events')
      .select(['pipelines.environment', 'projects.name as project_name'])
      .where('pipelines.id', '=', id),
  );
  const reset = prepared(2, (id: string, queued: number) =>
    q
      .updateTable('pipelines')
      .set({ status: sql.lit('created'), start_time: null, end_time: null, queued })
      .where('id', '=', id),
  );
  // What the end of a pipeline returns: what names its queue, and whether it notifies.
  const ending = [
    'project_id',
    'name',
    'concurrent',
    'status',
    d.jsonText('spec', 'data', 'notifications').as('notifications'),
  ] as const;
  const finish = prepared(3, (id: string, status: 'successful' | 'failed' | 'aborted', time: string) =>
    q
      .updateTable('pipelines')
      .set({ status, end_time: time, queued: sql.lit(0) })
      .where('id', '=', id)
      .where('status', 'in', unfinished)
      .returning(ending),
  );
  // The test of unfinished tasks goes through the partial index tasks_unfinished: a pipeline's
  // unfinished tasks, not all of its tasks. The read of its tasks until one did not succeed is
  // made only for the row that passes it, once all ended.
  const tasksOf = (pipelineId: string) =>
    q.selectFrom('tasks').select(sql.lit(1).as('found')).where('pipeline_id', '=', pipelineId);
  const settle = prepared(2, (id: string, time: string) =>
    q
      .updateTable('pipelines')
      .set((eb) => ({
        status: eb
          .case()
          .when(eb.exists(tasksOf(id).where('status', '<>', sql.lit('successful'))))
          .then(sql.lit('failed'))
          .else(sql.lit('successful'))
          .end(),
        end_time: time,
        queued: sql.lit(0),
      }))
      .where('id', '=', id)
      .where('status', 'in', unfinished)
      .where((eb) =>
        eb.not(eb.exists(tasksOf(id).where('status', 'in', [sql.lit('created'), sql.lit('started')]))),
      )
      .returning(ending),
  );
  // Through pipelines_admitted and pipelines_queued: one row each, however long the queue.
  // Their WHERE terms are written as the partial indexes' are, with literals, for the
  // planner to match them.
  const admittedId = prepared(2, (projectId: string, name: string) =>
    pipelines
      .select('id')
      .where('project_id', '=', projectId)
      .where('name', '=', name)
      .where('concurrent', '=', sql.lit(0))
      .where('queued', '=', sql.lit(0))
      .where('status', 'in', unfinished)
      .limit(1),
  );
  const firstQueuedId = prepared(2, (projectId: string, name: string) =>
    pipelines
      .select('id')
      .where('project_id', '=', projectId)
      .where('name', '=', name)
      .where('queued', '=', sql.lit(1))
      .orderBy('creation_time')
      .orderBy('id')
      .limit(1),
  );
  const pendingInstantiation = prepared(1, (id: string) =>
    pipelines
      .selectAll()
      .where('id', '=', id)
      .where('pending_tasks', 'is not', null)
      .$narrowType<{ pending_tasks: string }>(),
  );
  const pendingState = prepared(1, (id: string) =>
    pipelines
      .select(['status', 'end_time', 'queued', 'released_through'])
      .where('id', '=', id)
      .where('pending_tasks', 'is not', null),
  );
  const releaseThrough = prepared(2, (id: string, lastId: string) =>
    q.updateTable('pipelines').set({ released_through: lastId }).where('id', '=', id),
  );
  const endInstantiation = prepared(1, (id: string) =>
    q.updateTable('pipelines').set({ pending_tasks: null, released_through: null }).where('id', '=', id),
  );
  const admit = prepared(1, (id: string) =>
    q
      .updateTable('pipelines')
      .set({ queued: sql.lit(0) })
      .where('id', '=', id),
  );
  return {
    async insert(pipeline: PipelineRecord): Promise<void> {
      await x.run(
        insert(
          pipeline.id,
          pipeline.org_id,
          pipeline.project_id,
          pipeline.name,
          pipeline.pipeline_id ?? null,
          pipeline.trigger_id ?? null,
          pipeline.command_id ?? null,
          pipeline.event_id,
          pipeline.event_time,
          pipeline.concurrent ? 1 : 0,
          pipeline.creation_time,
          pipeline.status,
          JSON.stringify(pipeline.spec),
          JSON.stringify(pipeline.environment),
          pipeline.queued ? 1 : 0,
          pipeline.pending_tasks ? JSON.stringify(pipeline.pending_tasks) : null,
        ),
      );
    },
    async get(projectId: string, id: string): Promise<Pipeline | undefined> {
      const row = await x.first(byId(projectId, id));
      return row && toPipeline(row as PipelineRow);
    },
    /**
     * What its tasks run with: its project, its event and the variables of its command's
     * parameters (not its spec, which is large), in one read.
     */
    async runContext(
      id: string,
    ): Promise<{ project: Project; event: Event; environment: Record<string, string> } | undefined> {
      const row = await x.first(runContext(id));
      if (!row) return undefined;
      const { environment, project_name, ...event } = row;
      return {
        project: { id: event.project_id, org_id: event.org_id, name: project_name },
        event: toEvent(event),
        environment: JSON.parse(environment),
      };
    },
    list(projectId: string, filters: PipelineFilters, request: PageRequest): Promise<Page<Pipeline>> {
      const index = filterIndex(filters);
      let from = (
        index === undefined
          ? pipelines
          : // INDEXED BY on SQLite (PostgreSQL's planner has the statistics to choose).
            q.selectFrom(d.indexed('pipelines', index))
      ).where('project_id', '=', projectId);
      for (const [filter, value] of Object.entries(filters)) {
        if (value === undefined) continue;
        const [column, operator] = FILTER_CONDITIONS[filter as keyof PipelineFilters];
        from = from.where(column, operator, value);
      }
      return paginate(x, {
        from,
        sorts: { id: 'id', event_time: 'event_time', creation_time: 'creation_time' },
        request,
        toElement: toPipeline,
      });
    },
    /** Back to `created`, for a restart, queued or not. */
    async reset(id: string, queued: boolean): Promise<void> {
      await x.run(reset(id, queued ? 1 : 0));
    },
    /**
     * Ends an unfinished pipeline (out of its queue, if it was queued); returns what names its
     * queue, or undefined when it had already ended.
     */
    async finish(id: string, status: 'successful' | 'failed' | 'aborted', time: string) {
      return endedOf(await x.first(finish(id, status, time)));
    },
    /**
     * Ends an unfinished pipeline none of whose tasks is unfinished: failed if one did not
     * succeed, else successful. Returns what finish does; undefined while a task is unfinished.
     */
    async settle(id: string, time: string) {
      return endedOf(await x.first(settle(id, time)));
    },
    /** The unfinished, not queued pipeline of a non-concurrent resource's name, if any. */
    async admittedId(projectId: string, name: string): Promise<string | undefined> {
      const row = await x.first(admittedId(projectId, name));
      return row?.id;
    },
    /** The oldest pipeline queued under a name, if any. */
    async firstQueuedId(projectId: string, name: string): Promise<string | undefined> {
      const row = await x.first(firstQueuedId(projectId, name));
      return row?.id;
    },
    /** A pipeline whose tasks are still being created, with what creating them needs. */
    async pendingInstantiation(id: string): Promise<PendingInstantiation | undefined> {
      const row = await x.first(pendingInstantiation(id));
      if (!row) return undefined;
      const pipeline: PipelineRecord = {
        ...toPipeline(row as PipelineRow),
        spec: JSON.parse(row.spec),
        environment: JSON.parse(row.environment),
        queued: row.queued === 1,
      };
      return { pipeline, tasks: JSON.parse(row.pending_tasks) };
    },
    /** The small part of a pending instantiation that changes, read at each of its steps; undefined once it ended. */
    async pendingState(id: string): Promise<PendingState | undefined> {
      const row = await x.first(pendingState(id));
      if (!row) return undefined;
      return {
        status: row.status as Status,
        ...(row.end_time === null ? {} : { end_time: row.end_time }),
        queued: row.queued === 1,
        ...(row.released_through === null ? {} : { released_through: row.released_through }),
      };
    },
    /** Pipelines whose tasks are still being created or released (after a crash, those it interrupted). */
    async pendingInstantiationIds(): Promise<string[]> {
      const rows = await x.all(pipelines.select('id').where('pending_tasks', 'is not', null));
      return rows.map((row) => row.id);
    },
    /** Its tasks up to `lastId` (by id) no longer wait for the others to exist. */
    async releaseThrough(id: string, lastId: string): Promise<void> {
      await x.run(releaseThrough(id, lastId));
    },
    /** Every task of the pipeline exists and is released. */
    async endInstantiation(id: string): Promise<void> {
      await x.run(endInstantiation(id));
    },
    /** Out of its queue: its tasks may run. */
    async admit(id: string): Promise<void> {
      await x.run(admit(id));
    },
  };
}
