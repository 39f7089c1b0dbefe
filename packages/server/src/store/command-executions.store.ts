import type { Schemas } from '@pipewright/types';
import type { Selectable } from 'kysely';
import type { Page, PageRequest } from '../domain/cursor.js';
import type { QueryBuilder } from './dialect.js';
import type { CommandExecutions } from './generated/database.js';
import { paginate } from './paginate.js';
import { prepared } from './prepared.js';
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
  const insert = prepared(
    9,
    (
      id: string,
      orgId: string,
      projectId: string,
      executorId: string | null,
      executionTime: string,
      commandId: string,
      parameters: string,
      eventId: string,
      pipelineIds: string,
    ) =>
      q.insertInto('command_executions').values({
        id,
        org_id: orgId,
        project_id: projectId,
        executor_id: executorId,
        execution_time: executionTime,
        command_id: commandId,
        parameters,
        event_id: eventId,
        pipeline_ids: pipelineIds,
      }),
  );
  const byId = prepared(2, (projectId: string, id: string) =>
    q.selectFrom('command_executions').selectAll().where('project_id', '=', projectId).where('id', '=', id),
  );
  return {
    async insert(execution: CommandExecution): Promise<void> {
      await x.run(
        insert(
          execution.id,
          execution.org_id,
          execution.project_id,
          execution.executor_id ?? null,
          execution.execution_time,
          execution.command_id,
          JSON.stringify(execution.parameters),
          execution.event_id,
          JSON.stringify(execution.pipeline_ids),
        ),
      );
    },
    async get(projectId: string, id: string): Promise<CommandExecution | undefined> {
      const row = await x.first(byId(projectId, id));
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
