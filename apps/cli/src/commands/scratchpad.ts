import { type ApiClient, getScratchpadEntry, setScratchpadEntry } from '@pipewright/client';
import type { Command, Group, Invocation } from '../command.js';
import { UsageError } from '../errors.js';
import { readStdin } from '../input.js';
import { printJson, printTable } from '../listing.js';
import { JSON_OPTION, type OptionSpecs } from '../options.js';
import type { Session } from '../session.js';
import { argument, flag, option } from '../values.js';

const PIPELINE_OPTION: OptionSpecs = {
  pipeline: {
    type: 'string',
    value: 'ID',
    description: 'the pipeline (default: PIPEWRIGHT_PIPELINE_ID, the pipeline of the running task)',
  },
};

/** The pipeline whose scratchpad a subcommand works on, and a client of its project. */
interface Target {
  client: ApiClient;
  pipelineId: string;
}

async function target(session: Session, invocation: Invocation): Promise<Target> {
  const pipelineId = option(invocation, 'pipeline') ?? session.settings.pipelineId;
  if (!pipelineId) {
    throw new UsageError(
      'no pipeline given: use --pipeline ID (inside a task, PIPEWRIGHT_PIPELINE_ID is the default)',
    );
  }
  const { client } = await session.project();
  return { client, pipelineId };
}

/** A scratchpad subcommand: every one takes --pipeline, and runs on its target, exiting 0. */
function entryCommand(
  command: Omit<Command, 'options' | 'run'> & {
    options?: OptionSpecs;
    run(target: Target, invocation: Invocation, session: Session): Promise<void>;
  },
): Command {
  return {
    ...command,
    options: { ...PIPELINE_OPTION, ...command.options },
    async run(session, invocation) {
      await command.run(await target(session, invocation), invocation, session);
      return 0;
    },
  };
}

export const scratchpad: Group = {
  name: 'scratchpad',
  summary: "Read and write a pipeline's scratchpad (default: the running task's pipeline).",
  commands: [
    entryCommand({
      name: 'list',
      summary: 'List the entries of the scratchpad.',
      arity: [0, 0],
      options: JSON_OPTION,
      async run({ client, pipelineId }, invocation, session) {
        const { data = {} } = await client.GET('/pipelines/id/{id}/scratchpad', {
          params: { path: { id: pipelineId } },
        });
        if (flag(invocation, 'json')) printJson(session, data);
        else if (Object.keys(data).length === 0) session.stderr.write('The scratchpad is empty.\n');
        else {
          const columns = [
            { header: 'KEY', value: ([key]: [string, string]) => key },
            { header: 'VALUE', value: ([, value]: [string, string]) => value },
          ];
          printTable(session, columns, Object.entries(data));
        }
      },
    }),
    entryCommand({
      name: 'get',
      args: 'KEY',
      summary: 'Print the value of an entry, exactly as stored.',
      arity: [1, 1],
      async run({ client, pipelineId }, invocation, session) {
        const value = await getScratchpadEntry(client, pipelineId, argument(invocation, 0));
        // Exactly the value for scripts; a final newline for people at a terminal.
        session.stdout.write(session.stdout.isTTY && !value.endsWith('\n') ? `${value}\n` : value);
      },
    }),
    entryCommand({
      name: 'set',
      args: 'KEY VALUE|-',
      summary: 'Set an entry (- reads the value from standard input).',
      arity: [2, 2],
      async run({ client, pipelineId }, invocation) {
        const given = argument(invocation, 1);
        const value = given === '-' ? await readStdin() : given;
        await setScratchpadEntry(client, pipelineId, argument(invocation, 0), value);
      },
    }),
    entryCommand({
      name: 'delete',
      args: 'KEY',
      summary: 'Delete an entry.',
      arity: [1, 1],
      async run({ client, pipelineId }, invocation) {
        await client.DELETE('/pipelines/id/{id}/scratchpad/key/{key}', {
          params: { path: { id: pipelineId, key: argument(invocation, 0) } },
        });
      },
    }),
    entryCommand({
      name: 'clear',
      summary: 'Delete every entry.',
      arity: [0, 0],
      async run({ client, pipelineId }) {
        await client.DELETE('/pipelines/id/{id}/scratchpad', { params: { path: { id: pipelineId } } });
      },
    }),
  ],
};
