import type { Schemas } from '@pipewright/types';
import type { Page, PageRequest } from '../domain/cursor.js';
import { DomainError, invalidRequestBody } from '../domain/errors.js';
import { withDefaults } from '../domain/execution/parameter-values.js';
import { newId } from '../domain/ids.js';
import type { Principal } from '../domain/principal.js';
import { checkParameterValues } from '../domain/resources/parameters.js';
import type { Store, Tables } from '../store/index.js';
import type { EventIntake } from './intake/event-intake.js';

type Project = Schemas['Project'];
type CommandExecution = Schemas['CommandExecution'];
type CommandSpec = Extract<Schemas['ResourceSpec'], { type: 'command' }>;

export function createCommandService(store: Store, intake: EventIntake) {
  const commandOf = async (tables: Tables, project: Project, id: string) => {
    const resource = await tables.resources.get(project.id, id);
    if (resource?.spec.type !== 'command')
      throw new DomainError('unknown_command', `no command ${id}`, { id });
    return { ...resource, spec: resource.spec as CommandSpec };
  };
  return {
    /**
     * Checks and completes the parameters, then stores the event, the command execution
     * and the command's pipelines in one transaction, through the event intake.
     */
    async execute(
      principal: Principal,
      project: Project,
      commandId: string,
      given: Record<string, Schemas['ParameterValue']>,
    ): Promise<CommandExecution> {
      const { result, released } = await intake.transaction(async (admit, tx) => {
        const command = await commandOf(tx, project, commandId);
        const declared = command.spec.data.parameters ?? [];
        const problems = checkParameterValues(
          declared,
          given,
          '/parameters',
          `command "${command.spec.name}"`,
        );
        if (problems.length > 0) throw invalidRequestBody(problems);
        const parameters = withDefaults(declared, given);
        const { event, pipelineIds } = await admit({
          org_id: project.org_id,
          project_id: project.id,
          command_id: command.id,
          connector: 'command',
          name: 'execution',
          data: { parameters },
        });
        const created: CommandExecution = {
          id: newId(),
          org_id: project.org_id,
          project_id: project.id,
          ...(principal.accountId ? { executor_id: principal.accountId } : {}),
          execution_time: event.creation_time,
          command_id: command.id,
          parameters,
          event_id: event.id,
          pipeline_ids: pipelineIds,
        };
        await tx.commandExecutions.insert(created);
        return created;
      });
      await released;
      return result;
    },
    async get(project: Project, id: string): Promise<CommandExecution> {
      const execution = await store.commandExecutions.get(project.id, id);
      if (!execution)
        throw new DomainError('unknown_command_execution', `no command execution ${id}`, { id });
      return execution;
    },
    list(
      project: Project,
      commandId: string | undefined,
      request: PageRequest,
    ): Promise<Page<CommandExecution>> {
      return store.commandExecutions.list(project.id, commandId, request);
    },
  };
}
