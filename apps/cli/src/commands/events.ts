import { type Schemas, walk } from '@pipewright/client';
import type { Group } from '../command.js';
import { UsageError } from '../errors.js';
import { readStdin } from '../input.js';
import { printJson, printList, printTable } from '../listing.js';
import { JSON_OPTION, LIST_OPTIONS } from '../options.js';
import type { Session } from '../session.js';
import { showCommand } from '../show.js';
import { type Column, formatTime, renderFields } from '../table.js';
import { argument, flag, option } from '../values.js';

type Event = Schemas['Event'];
type Pipeline = Schemas['Pipeline'];

const columns: Column<Event>[] = [
  { header: 'ID', value: (event) => event.id, fixed: true },
  { header: 'CONNECTOR', value: (event) => event.connector },
  { header: 'NAME', value: (event) => event.name },
  { header: 'TIME', value: (event) => formatTime(event.event_time) },
  { header: 'REPLAY OF', value: (event) => event.original_event_id ?? '' },
  { header: 'DATA', value: (event) => JSON.stringify(event.data) },
];

async function eventData(text: string): Promise<Record<string, unknown>> {
  const json = text === '-' ? await readStdin() : text;
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (error) {
    throw new UsageError(`the event data is not JSON: ${(error as Error).message}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new UsageError('the event data must be a JSON object');
  }
  return data as Record<string, unknown>;
}

function printEvent(session: Session, event: Event): void {
  session.stdout.write(
    renderFields([
      ['Event', `${event.name} ${event.id}`],
      ['Connector', event.connector],
      ['Time', formatTime(event.event_time)],
      ['Stored', formatTime(event.creation_time)],
      ['Trigger', event.trigger_id],
      ['Command', event.command_id],
      ['Replay of', event.original_event_id ?? undefined],
    ]),
  );
  session.stdout.write(`Data:\n${JSON.stringify(event.data, null, 2)}\n`);
}

const startedColumns: Column<Pipeline>[] = [
  { header: 'PIPELINE', value: (pipeline) => pipeline.id, fixed: true },
  { header: 'NAME', value: (pipeline) => pipeline.name },
  { header: 'EVENT', value: (pipeline) => pipeline.event_id, fixed: true },
  { header: 'PROJECT', value: (pipeline) => pipeline.project_id, fixed: true },
];

/** The pipelines that stored events started, read by each event's id. */
async function startedPipelines(session: Session, stored: Event[]): Promise<Pipeline[]> {
  const started: Pipeline[] = [];
  for (const event of stored) {
    const client = session.projectClient(event.project_id);
    for await (const pipeline of walk(client, '/pipelines', { event_id: event.id, size: 100 })) {
      started.push(pipeline);
    }
  }
  return started;
}

async function printStarted(session: Session, name: string, stored: Event[]): Promise<void> {
  const pipelines = await startedPipelines(session, stored);
  const triggers = stored.length === 1 ? '1 trigger' : `${stored.length} triggers`;
  const count = pipelines.length === 1 ? '1 pipeline' : `${pipelines.length} pipelines`;
  session.stdout.write(`Sent event ${name}: ${triggers} accepted it, ${count} started.\n`);
  if (pipelines.length === 0) return;
  printTable(session, startedColumns, pipelines);
  session.stderr.write('Follow one with `pipewright pipelines watch ID`.\n');
}

export const events: Group = {
  name: 'events',
  summary: 'Send custom events; list, show and replay events.',
  commands: [
    {
      name: 'send',
      args: 'NAME JSON|-',
      summary: 'Send a custom event with JSON object data (- reads it from standard input).',
      details:
        'Every enabled trigger listening to NAME whose filters hold for the data stores the\n' +
        'event and instantiates its pipelines: in the selected project only, or in every\n' +
        'project of the organization when no project is selected. Prints the pipelines it\n' +
        'started (--json: the stored events, as the API answers).',
      arity: [2, 2],
      options: {
        time: { type: 'string', value: 'TIME', description: 'when it happened (RFC 3339; default: now)' },
        ...JSON_OPTION,
      },
      async run(session, invocation) {
        const data = await eventData(argument(invocation, 1));
        const time = option(invocation, 'time');
        const client = (await session.optionalProject())?.client ?? session.client();
        const { data: stored = [] } = await client.POST('/events', {
          body: {
            connector: 'custom',
            name: argument(invocation, 0),
            data,
            ...(time ? { event_time: time } : {}),
          },
        });
        if (flag(invocation, 'json')) printJson(session, stored);
        else if (stored.length === 0) session.stderr.write('No trigger accepted the event.\n');
        else await printStarted(session, argument(invocation, 0), stored);
        return 0;
      },
    },
    {
      name: 'list',
      summary: 'List the events of the project, newest first.',
      arity: [0, 0],
      options: {
        name: { type: 'string', value: 'NAME', description: 'only events of this name' },
        connector: {
          type: 'string',
          value: 'CONNECTOR',
          description: 'only events of this connector (custom, command)',
        },
        pipeline: {
          type: 'string',
          value: 'ID',
          description: 'only the event that instantiated this pipeline',
        },
        ...LIST_OPTIONS,
      },
      async run(session, invocation) {
        const { client } = await session.project();
        const filters = { name: option(invocation, 'name'), connector: option(invocation, 'connector') };
        const pipelineId = option(invocation, 'pipeline');
        // Newest first: ids only order events by the second they were made in.
        const query = {
          sort: 'event_time',
          order: 'desc',
          ...(filters.name ? { name: filters.name } : {}),
          ...(filters.connector ? { connector: filters.connector } : {}),
          ...(pipelineId ? { pipeline_id: pipelineId } : {}),
        } as const;
        await printList(session, client, '/events', query, invocation.values, columns, 'events');
        return 0;
      },
    },
    showCommand({
      summary: 'Show an event and its data.',
      noun: 'event',
      fetch: async (client, id) => (await client.GET('/events/id/{id}', { params: { path: { id } } })).data,
      print: (session, _client, event) => printEvent(session, event),
    }),
    {
      name: 'replay',
      args: 'ID',
      summary: 'Store a copy of an event and instantiate its pipelines again.',
      arity: [1, 1],
      options: JSON_OPTION,
      async run(session, invocation) {
        const { client } = await session.project();
        const id = argument(invocation, 0);
        const { data: event } = await client.POST('/events/id/{id}/replay', { params: { path: { id } } });
        if (!event) throw new Error(`no answer for the replay of ${id}`);
        if (flag(invocation, 'json')) printJson(session, event);
        else session.stdout.write(`Replayed event ${id} as ${event.id}.\n`);
        return 0;
      },
    },
  ],
};
