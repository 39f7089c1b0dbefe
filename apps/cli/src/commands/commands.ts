import type { ApiClient, Schemas } from '@pipewright/client';
import type { Group } from '../command.js';
import { followToEnd } from '../follow.js';
import { printJson, printList, printTable } from '../listing.js';
import { JSON_OPTION, LIST_OPTIONS } from '../options.js';
import { parseParameters } from '../parameters.js';
import { showCommand } from '../show.js';
import { type Column, renderFields } from '../table.js';
import { flag } from '../values.js';

type Resource = Schemas['Resource'];
type CommandData = Schemas['CommandData'];
type Parameter = Schemas['CommandParameter'];

// Resources listed with type=command hold command specs.
const dataOf = (resource: Resource) => resource.spec.data as CommandData;

const listColumns: Column<Resource>[] = [
  { header: 'NAME', value: (resource) => resource.spec.name },
  {
    header: 'PARAMETERS',
    value: (resource) =>
      dataOf(resource)
        .parameters.map((p) => p.name)
        .join(', '),
  },
  { header: 'PIPELINES', value: (resource) => dataOf(resource).pipelines.join(', ') },
  { header: 'DESCRIPTION', value: (resource) => resource.spec.description ?? '' },
];

const parameterColumns: Column<Parameter>[] = [
  { header: 'NAME', value: (parameter) => parameter.name },
  {
    header: 'TYPE',
    value: (parameter) => (parameter.values ? parameter.values.join('|') : parameter.type),
  },
  {
    header: 'DEFAULT',
    value: (parameter) =>
      parameter.default === undefined ? '(required)' : JSON.stringify(parameter.default),
  },
  { header: 'VARIABLE', value: (parameter) => parameter.environment ?? '' },
  { header: 'DESCRIPTION', value: (parameter) => parameter.description ?? '' },
];

async function commandNamed(client: ApiClient, name: string): Promise<Resource> {
  const { data } = await client.GET('/resources/type/{type}/name/{name}', {
    params: { path: { type: 'command', name } },
  });
  if (!data) throw new Error(`no answer for command ${name}`);
  return data;
}

export const commands: Group = {
  name: 'commands',
  summary: 'List, describe and execute the commands of the project.',
  commands: [
    {
      name: 'list',
      summary: 'List the commands of the project, by name.',
      arity: [0, 0],
      options: LIST_OPTIONS,
      async run(session, invocation) {
        const { client } = await session.project();
        const query = { type: 'command', sort: 'name' } as const;
        await printList(session, client, '/resources', query, invocation.values, listColumns, 'commands');
        return 0;
      },
    },
    showCommand({
      name: 'describe',
      args: 'NAME',
      summary: 'Show a command: its parameters (types, defaults, variables) and pipelines.',
      noun: 'command',
      fetch: commandNamed,
      print(session, _client, resource) {
        const data = dataOf(resource);
        session.stdout.write(
          renderFields([
            ['Command', resource.spec.name],
            ['Description', resource.spec.description],
            ['Pipelines', data.pipelines.join(', ')],
            ['Id', resource.id],
          ]),
        );
        if (data.parameters.length === 0) {
          session.stdout.write('\nNo parameters.\n');
        } else {
          session.stdout.write('\n');
          printTable(session, parameterColumns, data.parameters);
        }
      },
    }),
    {
      name: 'execute',
      args: 'NAME [KEY=VALUE...]',
      summary: 'Execute a command with parameter values, and optionally follow its pipelines.',
      details:
        'Each value is read by the type of its parameter: a number, true or false, or text.\n' +
        'Unknown parameters and missing required ones are refused before anything is sent.\n' +
        'With --wait, the statuses of the tasks are shown until every pipeline ends (live on a\n' +
        "terminal, a line per change otherwise), then the failed steps' output; the exit status\n" +
        'is 0 only when every pipeline is successful. Ctrl-C stops following, not the pipelines.',
      arity: [1, Number.POSITIVE_INFINITY],
      options: {
        wait: { type: 'boolean', short: 'w', description: 'follow the pipelines to their end' },
        ...JSON_OPTION,
      },
      async run(session, invocation) {
        const { client } = await session.project();
        const [name = '', ...assignments] = invocation.positionals;
        const resource = await commandNamed(client, name);
        const parameters = parseParameters(name, dataOf(resource).parameters, assignments);
        const { data: execution } = await client.POST('/commands/id/{id}/execute', {
          params: { path: { id: resource.id } },
          body: { parameters },
        });
        if (!execution) throw new Error('no answer for the execution');
        const json = flag(invocation, 'json');
        if (!flag(invocation, 'wait')) {
          if (json) printJson(session, execution);
          else
            session.stdout.write(
              `Executed ${name} (${execution.id}): pipelines ${execution.pipeline_ids.join(', ')}\n`,
            );
          return 0;
        }
        // With --json, stdout holds one JSON document at the end; the progress goes to stderr.
        const progress = json ? session.stderr : session.stdout;
        if (!json) session.stdout.write(`Executed ${name} (${execution.id}).\n`);
        const { states, status } = await followToEnd(client, execution.pipeline_ids, progress);
        if (json) printJson(session, { execution, pipelines: states.map((state) => state.pipeline) });
        return status;
      },
    },
  ],
};
