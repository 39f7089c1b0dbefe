import type { Schemas } from '@pipewright/types';
import type { Selectable } from 'kysely';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { QueryBuilder } from './dialect.js';
import type { CommandExecutions } from './generated/database.js';
import { paginate } from './paginate.js';
import type { Executor } from './sql.js';

type CommandExecution = Schemas['CommandExecution'];

type CommandExecutionRow = Selectable<CommandExecutions>;

function toCommandExecution(row: CommandExecutionRow): CommandExecution {
  const { executor_id, parameters, pipeline_ids, ...rest } = row;
  return {
    ...rest,
    ...(executor_id === null ? {} : { executor_id }),
    parameters: JSON.parse(parameters),
    pipeline_ids: JSON.parse(pipeline_ids),
  };
}

export function createCommandExecutionStore(q: QueryBuilder, x: Executor) {
  return {
    async insert(execution: CommandExecution): Promise<void> {
      await x.run(
        q.insertInto('command_executions').values({
          id: execution.id,
          org_id: execution.org_id,
          project_id: execution.project_id,
          executor_id: execution.executor_id ?? null,
          execution_time: execution.execution_time,
          command_id: execution.command_id,
          parameters: JSON.stringify(execution.parameters),
          event_id: execution.event_id,
          pipeline_ids: JSON.stringify(execution.pipeline_ids),
        }),
      );
    },
    async get(projectId: string, id: string): Promise<CommandExecution | undefined> {
      const row = await x.first(
        q
          .selectFrom('command_executions')
          .selectAll()
          .where('project_id', '=', projectId)
          .where('id', '=', id),
      );
      return row && toCommandExecution(row);
    },
    list(
      projectId: string,
      commandId: string | undefined,
      request: PageRequest,
    ): Promise<Page<CommandExecution>> {
      let from = q.selectFrom('command_executions').where('project_id', '=', projectId);
      if (commandId !== undefined) from = from.where('command_id', '=', commandId);
      return paginate<CommandExecutionRow, CommandExecution>(x, {
        from,
        sorts: { id: 'id', execution_time: 'execution_time' },
        request,
        toElement: toCommandExecution,
      });
    },
  };
}
