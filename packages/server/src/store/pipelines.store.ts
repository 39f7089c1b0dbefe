import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { Status } from '../domain/execution.js';
import type { Db } from './db.js';
import { paginate } from './paginate.js';

type Pipeline = Schemas['Pipeline'];

/** A pipeline with what it was instantiated with, which the API does not show. */
export interface PipelineRecord extends Pipeline {
  spec: Schemas['PipelineSpec'];
  /** Variables every task of the pipeline gets (from its command's parameters). */
  environment: Record<string, string>;
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

export function createPipelineStore(db: Db) {
  const insert = db.prepare(
    `INSERT INTO pipelines (id, org_id, project_id, name, pipeline_id, trigger_id, command_id, event_id,
                            event_time, concurrent, creation_time, status, spec, environment)
     VALUES (@id, @org_id, @project_id, @name, @pipeline_id, @trigger_id, @command_id, @event_id,
             @event_time, @concurrent, @creation_time, @status, @spec, @environment)`,
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
  const finish = db.prepare(
    `UPDATE pipelines SET status = @status, end_time = @time
     WHERE id = @id AND status IN ('created', 'started')`,
  );
  const reset = db.prepare(
    `UPDATE pipelines SET status = 'created', start_time = NULL, end_time = NULL WHERE id = ?`,
  );
  return {
    insert(pipeline: PipelineRecord): void {
      insert.run({
        pipeline_id: null,
        trigger_id: null,
        command_id: null,
        ...pipeline,
        concurrent: pipeline.concurrent ? 1 : 0,
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
    list(projectId: string, status: Status | undefined, request: PageRequest): Page<Pipeline> {
      const where = ['project_id = ?'];
      const params: unknown[] = [projectId];
      if (status !== undefined) {
        where.push('status = ?');
        params.push(status);
      }
      return paginate(db, {
        table: 'pipelines',
        where,
        params,
        sorts: { id: 'id', event_time: 'event_time', creation_time: 'creation_time' },
        request,
        toElement: toPipeline,
      });
    },
    /** created -> started; no change for a pipeline already started. */
    markStarted(id: string, time: string): void {
      start.run({ id, time });
    },
    /** Back to `created`, for a restart. */
    reset(id: string): void {
      reset.run(id);
    },
    /** Ends an unfinished pipeline; returns false when it had already ended. */
    finish(id: string, status: 'successful' | 'failed' | 'aborted', time: string): boolean {
      return finish.run({ id, status, time }).changes === 1;
    },
  };
}
