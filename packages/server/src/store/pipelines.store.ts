import type { Schemas } from '@pipewright/types';
import { sql } from 'kysely';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { Status } from '../domain/execution/statuses.js';
import type { Db } from './db.js';
import type { QueryBuilder } from './dialect.js';
import type { Pipelines } from './generated/database.js';
import { paginate } from './paginate.js';
import type { Executor } from './sql.js';

type Pipeline = Schemas['Pipeline'];

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

interface PipelineRow extends Record<string, unknown> {
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  pipeline_id: string | null;
  trigger_id: string | null;
  command_id: string | null;
  event_id: string;
  event_time: string;
  concurrent: number;
  creation_time: string;
  start_time: string | null;
  end_time: string | null;
  status: Status;
  spec: string;
  environment: string;
}

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

export function createPipelineStore(db: Db, q: QueryBuilder, x: Executor) {
  const insert = db.prepare(
    `INSERT INTO pipelines (id, org_id, project_id, name, pipeline_id, trigger_id, command_id, event_id,
                            event_time, concurrent, creation_time, status, spec, environment, queued, pending_tasks)
     VALUES (@id, @org_id, @project_id, @name, @pipeline_id, @trigger_id, @command_id, @event_id,
             @event_time, @concurrent, @creation_time, @status, @spec, @environment, @queued, @pending_tasks)`,
  );
  const byId = db.prepare<[string, string], PipelineRow>(
    'SELECT * FROM pipelines WHERE project_id = ? AND id = ?',
  );
  const runContextById = db.prepare<[string], { event_id: string; environment: string }>(
    'SELECT event_id, environment FROM pipelines WHERE id = ?',
  );
  const start = db.prepare(
    `UPDATE pipelines SET status = 'started', start_time = @time WHERE id = @id AND status = 'created'`,
  );
  const finish = db.prepare<
    { id: string; status: string; time: string },
    { project_id: string; name: string; concurrent: number }
  >(
    `UPDATE pipelines SET status = @status, end_time = @time, queued = 0
     WHERE id = @id AND status IN ('created', 'started')
     RETURNING project_id, name, concurrent`,
  );
  const reset = db.prepare<{ id: string; queued: number }>(
    `UPDATE pipelines SET status = 'created', start_time = NULL, end_time = NULL, queued = @queued WHERE id = @id`,
  );
  // Through pipelines_admitted and pipelines_queued: one row each, however long the queue.
  const admitted = db.prepare<[string, string], { id: string }>(
    `SELECT id FROM pipelines
     WHERE project_id = ? AND name = ? AND concurrent = 0 AND queued = 0 AND status IN ('created', 'started')
     LIMIT 1`,
  );
  const firstQueued = db.prepare<[string, string], { id: string }>(
    `SELECT id FROM pipelines WHERE project_id = ? AND name = ? AND queued = 1 ORDER BY creation_time, id LIMIT 1`,
  );
  const admit = db.prepare<[string]>('UPDATE pipelines SET queued = 0 WHERE id = ?');
  const pending = db.prepare<[string], PipelineRow & { queued: number; pending_tasks: string }>(
    'SELECT * FROM pipelines WHERE id = ? AND pending_tasks IS NOT NULL',
  );
  const pendingState = db.prepare<
    [string],
    { status: Status; end_time: string | null; queued: number; released_through: string | null }
  >(
    `SELECT status, end_time, queued, released_through FROM pipelines
     WHERE id = ? AND pending_tasks IS NOT NULL`,
  );
  const allPending = db.prepare<[], { id: string }>(
    'SELECT id FROM pipelines WHERE pending_tasks IS NOT NULL',
  );
  const releaseThrough = db.prepare<[string, string]>(
    'UPDATE pipelines SET released_through = ? WHERE id = ?',
  );
  const endPending = db.prepare<[string]>(
    'UPDATE pipelines SET pending_tasks = NULL, released_through = NULL WHERE id = ?',
  );
  return {
    insert(pipeline: PipelineRecord): void {
      insert.run({
        pipeline_id: null,
        trigger_id: null,
        command_id: null,
        ...pipeline,
        concurrent: pipeline.concurrent ? 1 : 0,
        queued: pipeline.queued ? 1 : 0,
        pending_tasks: pipeline.pending_tasks ? JSON.stringify(pipeline.pending_tasks) : null,
        spec: JSON.stringify(pipeline.spec),
        environment: JSON.stringify(pipeline.environment),
      });
    },
    get(projectId: string, id: string): Pipeline | undefined {
      const row = byId.get(projectId, id);
      return row && toPipeline(row);
    },
    /** What its tasks run with: its event and the variables of its command's parameters (not its spec, which is large). */
    runContext(id: string): { event_id: string; environment: Record<string, string> } | undefined {
      const row = runContextById.get(id);
      return row && { event_id: row.event_id, environment: JSON.parse(row.environment) };
    },
    list(projectId: string, filters: PipelineFilters, request: PageRequest): Promise<Page<Pipeline>> {
      const index = filterIndex(filters);
      let from = (
        index === undefined
          ? q.selectFrom('pipelines')
          : // SQLite: INDEXED BY (PostgreSQL's planner has the statistics to choose).
            q.selectFrom(
              sql<Pipelines>`pipelines`.as<'pipelines'>(sql`pipelines indexed by ${sql.id(index)}`),
            )
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
    /** created -> started; no change for a pipeline already started. */
    markStarted(id: string, time: string): void {
      start.run({ id, time });
    },
    /** Back to `created`, for a restart, queued or not. */
    reset(id: string, queued: boolean): void {
      reset.run({ id, queued: queued ? 1 : 0 });
    },
    /**
     * Ends an unfinished pipeline (out of its queue, if it was queued); returns what names its
     * queue, or undefined when it had already ended.
     */
    finish(
      id: string,
      status: 'successful' | 'failed' | 'aborted',
      time: string,
    ): { project_id: string; name: string; concurrent: boolean } | undefined {
      const row = finish.get({ id, status, time });
      return row && { project_id: row.project_id, name: row.name, concurrent: row.concurrent === 1 };
    },
    /** The unfinished, not queued pipeline of a non-concurrent resource's name, if any. */
    admittedId(projectId: string, name: string): string | undefined {
      return admitted.get(projectId, name)?.id;
    },
    /** The oldest pipeline queued under a name, if any. */
    firstQueuedId(projectId: string, name: string): string | undefined {
      return firstQueued.get(projectId, name)?.id;
    },
    /** A pipeline whose tasks are still being created, with what creating them needs. */
    pendingInstantiation(id: string): PendingInstantiation | undefined {
      const row = pending.get(id);
      if (!row) return undefined;
      const pipeline: PipelineRecord = {
        ...toPipeline(row),
        spec: JSON.parse(row.spec),
        environment: JSON.parse(row.environment),
        queued: row.queued === 1,
      };
      return { pipeline, tasks: JSON.parse(row.pending_tasks) };
    },
    /** The small part of a pending instantiation that changes, read at each of its steps; undefined once it ended. */
    pendingState(id: string): PendingState | undefined {
      const row = pendingState.get(id);
      if (!row) return undefined;
      return {
        status: row.status,
        ...(row.end_time === null ? {} : { end_time: row.end_time }),
        queued: row.queued === 1,
        ...(row.released_through === null ? {} : { released_through: row.released_through }),
      };
    },
    /** Pipelines whose tasks are still being created or released (after a crash, those it interrupted). */
    pendingInstantiationIds(): string[] {
      return allPending.all().map((row) => row.id);
    },
    /** Its tasks up to `lastId` (by id) no longer wait for the others to exist. */
    releaseThrough(id: string, lastId: string): void {
      releaseThrough.run(lastId, id);
    },
    /** Every task of the pipeline exists and is released. */
    endInstantiation(id: string): void {
      endPending.run(id);
    },
    /** Out of its queue: its tasks may run. */
    admit(id: string): void {
      admit.run(id);
    },
  };
}
