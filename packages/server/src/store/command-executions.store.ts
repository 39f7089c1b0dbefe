import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { Db } from './db.js';
import { paginate } from './paginate.js';

type CommandExecution = Schemas['CommandExecution'];

interface CommandExecutionRow extends Record<string, unknown> {
  id: string;
  org_id: string;
  project_id: string;
  executor_id: string | null;
  execution_time: string;
  command_id: string;
  parameters: string;
  event_id: string;
  pipeline_ids: string;
}

function toCommandExecution(row: CommandExecutionRow): CommandExecution {
  const { executor_id, parameters, pipeline_ids, ...rest } = row;
  return {
    ...rest,
    ...(executor_id === null ? {} : { executor_id }),
    parameters: JSON.parse(parameters),
    pipeline_ids: JSON.parse(pipeline_ids),
  };
}

export function createCommandExecutionStore(db: Db) {
  const insert = db.prepare(
    `INSERT INTO command_executions (id, org_id, project_id, executor_id, execution_time, command_id,
                                     parameters, event_id, pipeline_ids)
     VALUES (@id, @org_id, @project_id, @executor_id, @execution_time, @command_id,
             @parameters, @event_id, @pipeline_ids)`,
  );
  const byId = db.prepare<[string, string], CommandExecutionRow>(
    'SELECT * FROM command_executions WHERE project_id = ? AND id = ?',
  );
  return {
    insert(execution: CommandExecution): void {
      insert.run({
        executor_id: null,
        ...execution,
        parameters: JSON.stringify(execution.parameters),
        pipeline_ids: JSON.stringify(execution.pipeline_ids),
      });
    },
    get(projectId: string, id: string): CommandExecution | undefined {
      const row = byId.get(projectId, id);
      return row && toCommandExecution(row);
    },
    list(projectId: string, commandId: string | undefined, request: PageRequest): Page<CommandExecution> {
      const where = ['project_id = ?'];
      const params: unknown[] = [projectId];
      if (commandId !== undefined) {
        where.push('command_id = ?');
        params.push(commandId);
      }
      return paginate(db, {
        table: 'command_executions',
        where,
        params,
        sorts: { id: 'id', execution_time: 'execution_time' },
        request,
        toElement: toCommandExecution,
      });
    },
  };
}
