import type { ApiClient, Schemas } from '@pipewright/client';
import type { Command, Group } from '../command.js';
import { followToEnd, inPipelineOrder, taskLabel } from '../follow.js';
import { fetchList, printList, printTable } from '../listing.js';
import { LIST_OPTIONS, STATUS_OPTION } from '../options.js';
import type { Session } from '../session.js';
import { showCommand } from '../show.js';
import { type Column, formatDuration, formatTime, renderFields } from '../table.js';
import { argument, flag, option } from '../values.js';

type Pipeline = Schemas['Pipeline'];
type Task = Schemas['Task'];

const pipelineColumns: Column<Pipeline>[] = [
  { header: 'ID', value: (pipeline) => pipeline.id, fixed: true },
  { header: 'NAME', value: (pipeline) => pipeline.name },
  { header: 'STATUS', value: (pipeline) => pipeline.status },
  { header: 'CREATED', value: (pipeline) => formatTime(pipeline.creation_time) },
  { header: 'DURATION', value: (pipeline) => formatDuration(pipeline.start_time, pipeline.end_time) },
];

/** The tasks of one pipeline, as `pipelines show` and `tasks list --pipeline` show them. */
export const taskColumns: Column<Task>[] = [
  { header: 'ID', value: (task) => task.id, fixed: true },
  { header: 'TASK', value: taskLabel },
  { header: 'STATUS', value: (task) => task.status },
  { header: 'RETRY', value: (task) => String(task.retry) },
  { header: 'STARTED', value: (task) => formatTime(task.start_time) },
  { header: 'DURATION', value: (task) => formatDuration(task.start_time, task.end_time) },
  { header: 'FAILURE', value: (task) => task.failure_message ?? '' },
];

const WAIT_OPTION = {
  wait: { type: 'boolean', short: 'w', description: 'follow the pipeline to its end' },
} as const;

async function follow(session: Session, client: ApiClient, id: string): Promise<number> {
  return (await followToEnd(client, [id], session.stdout)).status;
}

/** abort, restart, restart-from-failure: a POST on the pipeline, then optionally follow it. */
function control(
  name: string,
  path: '/pipelines/id/{id}/abort' | '/pipelines/id/{id}/restart' | '/pipelines/id/{id}/restart_from_failure',
  summary: string,
  done: string,
): Command {
  const canWait = name !== 'abort';
  return {
    name,
    args: 'ID',
    summary,
    arity: [1, 1],
    options: canWait ? WAIT_OPTION : {},
    async run(session, invocation) {
      const { client } = await session.project();
      const id = argument(invocation, 0);
      await client.POST(path, { params: { path: { id } } });
      session.stdout.write(`${done} pipeline ${id}.\n`);
      return canWait && flag(invocation, 'wait') ? follow(session, client, id) : 0;
    },
  };
}

export const pipelines: Group = {
  name: 'pipelines',
  summary: 'List, show, follow, abort and restart pipelines.',
  commands: [
    {
      name: 'list',
      summary: 'List the pipelines of the project, newest first.',
      arity: [0, 0],
      options: { ...STATUS_OPTION, ...LIST_OPTIONS },
      async run(session, invocation) {
        const { client } = await session.project();
        const status = option(invocation, 'status') as Pipeline['status'] | undefined;
        const query = { sort: 'creation_time', order: 'desc', ...(status ? { status } : {}) } as const;
        await printList(
          session,
          client,
          '/pipelines',
          query,
          invocation.values,
          pipelineColumns,
          'pipelines',
        );
        return 0;
      },
    },
    showCommand({
      summary: 'Show a pipeline and its tasks.',
      noun: 'pipeline',
      fetch: async (client, id) =>
        (await client.GET('/pipelines/id/{id}', { params: { path: { id } } })).data,
      async print(session, client, pipeline) {
        session.stdout.write(
          renderFields([
            ['Pipeline', `${pipeline.name} ${pipeline.id}`],
            ['Status', pipeline.status],
            ['Event', pipeline.event_id],
            ['Command', pipeline.command_id],
            ['Trigger', pipeline.trigger_id],
            ['Created', formatTime(pipeline.creation_time)],
            ['Started', pipeline.start_time && formatTime(pipeline.start_time)],
            ['Ended', pipeline.end_time && formatTime(pipeline.end_time)],
            ['Duration', formatDuration(pipeline.start_time, pipeline.end_time) || undefined],
          ]),
        );
        const query = { pipeline_id: pipeline.id, sort: 'creation_time', size: 100 } as const;
        const { elements: tasks } = await fetchList(client, '/tasks', query, true);
        session.stdout.write('\n');
        printTable(session, taskColumns, inPipelineOrder(tasks));
      },
    }),
    control(
      'abort',
      '/pipelines/id/{id}/abort',
      'Abort an unfinished pipeline: its running steps are stopped.',
      'Aborted',
    ),
    control(
      'restart',
      '/pipelines/id/{id}/restart',
      'Run a finished pipeline again from the start (its scratchpad is cleared).',
      'Restarted',
    ),
    control(
      'restart-from-failure',
      '/pipelines/id/{id}/restart_from_failure',
      'Run again the failed and aborted tasks of a pipeline, and those depending on them.',
      'Restarted',
    ),
    {
      name: 'watch',
      args: 'ID',
      summary: "Follow a pipeline's tasks until it ends; exit status 0 only if it is successful.",
      arity: [1, 1],
      async run(session, invocation) {
        const { client } = await session.project();
        return follow(session, client, argument(invocation, 0));
      },
    },
  ],
};
