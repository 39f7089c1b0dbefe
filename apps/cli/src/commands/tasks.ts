import type { ListQuery, Schemas } from '@pipewright/client';
import type { Group } from '../command.js';
import { UsageError } from '../errors.js';
import { taskLabel } from '../follow.js';
import { followTaskOutput } from '../follow-output.js';
import { printJson, printList, printTable } from '../listing.js';
import { JSON_OPTION, LIST_OPTIONS, STATUS_OPTION } from '../options.js';
import { showCommand } from '../show.js';
import { restarted, stepBody, taskOutputHeading } from '../steps.js';
import { type Column, formatDuration, formatTime, renderFields } from '../table.js';
import { argument, flag, option } from '../values.js';
import { taskColumns } from './pipelines.js';

type Task = Schemas['Task'];
type StepExecution = Schemas['StepExecution'];

const listColumns: Column<Task>[] = [
  ...taskColumns.slice(0, 1),
  { header: 'PIPELINE', value: (task) => task.pipeline_id, fixed: true },
  ...taskColumns.slice(1),
];

const runColumn: Column<StepExecution> = { header: 'RUN', value: (step) => String(step.run) };

const stepColumns: Column<StepExecution>[] = [
  { header: 'ATTEMPT', value: (step) => String(step.attempt) },
  { header: 'STEP', value: (step) => String(step.index + 1) },
  { header: 'LABEL', value: (step) => step.label ?? '' },
  { header: 'STATUS', value: (step) => step.status },
  { header: 'EXIT', value: (step) => (step.exit_code === undefined ? '' : String(step.exit_code)) },
  { header: 'DURATION', value: (step) => formatDuration(step.start_time, step.end_time) },
];

/** The output of every step in order, each run headed by its number once the task has run more than once. */
const renderRuns = (steps: StepExecution[]) =>
  steps.map((step, i) => taskOutputHeading(steps, i) + stepBody(step)).join('');

export const tasks: Group = {
  name: 'tasks',
  summary: 'List and show tasks, read the output of their steps.',
  commands: [
    {
      name: 'list',
      summary: 'List the tasks of the project (newest first), or those of one pipeline in order.',
      arity: [0, 0],
      options: {
        pipeline: { type: 'string', value: 'ID', description: 'only the tasks of this pipeline' },
        ...STATUS_OPTION,
        ...LIST_OPTIONS,
      },
      async run(session, invocation) {
        const { client } = await session.project();
        const pipelineId = option(invocation, 'pipeline');
        const status = option(invocation, 'status') as Task['status'] | undefined;
        const query: ListQuery<'/tasks'> = {
          ...(pipelineId
            ? { pipeline_id: pipelineId, sort: 'creation_time' }
            : { sort: 'creation_time', order: 'desc' }),
          ...(status ? { status } : {}),
        };
        await printList(session, client, '/tasks', query, invocation.values, listColumns, 'tasks');
        return 0;
      },
    },
    showCommand({
      summary: 'Show a task and the executions of its steps, in every run.',
      noun: 'task',
      fetch: async (client, id) => (await client.GET('/tasks/id/{id}', { params: { path: { id } } })).data,
      async print(session, client, task) {
        session.stdout.write(
          renderFields([
            ['Task', `${taskLabel(task)} ${task.id}`],
            ['Pipeline', task.pipeline_id],
            ['Status', task.status],
            ['Run', String(task.run)],
            ['Retry', String(task.retry)],
            ['Dependencies', task.dependencies.join(', ') || undefined],
            ['Created', formatTime(task.creation_time)],
            ['Started', task.start_time && formatTime(task.start_time)],
            ['Ended', task.end_time && formatTime(task.end_time)],
            ['Failure', task.failure_message],
          ]),
        );
        const { data: steps = [] } = await client.GET('/tasks/id/{id}/steps', {
          params: { path: { id: task.id } },
        });
        if (steps.length > 0) {
          session.stdout.write('\n');
          printTable(session, restarted(steps) ? [runColumn, ...stepColumns] : stepColumns, steps);
        }
      },
    }),
    {
      name: 'output',
      args: 'ID',
      summary: 'Print the output of every step of a task, for every attempt of every run.',
      details:
        'Each step is headed by its attempt and how it ended. A restart of the pipeline that\n' +
        'runs the task again starts its next run, numbered from 1: once the task has more than\n' +
        'one, the output of each run is headed by `=== run N ===`, oldest first.\n' +
        'With --follow, the output is printed as the steps write it, until the task ends; a step\n' +
        'still running when its output starts is headed `running`. Ctrl-C stops following.',
      arity: [1, 1],
      options: {
        follow: {
          type: 'boolean',
          short: 'f',
          description: 'print the output as it is written, until the task ends',
        },
        ...JSON_OPTION,
      },
      async run(session, invocation) {
        const follow = flag(invocation, 'follow');
        if (follow && flag(invocation, 'json'))
          throw new UsageError('--follow prints text: it cannot go with --json');
        const { client } = await session.project();
        const id = argument(invocation, 0);
        if (follow) {
          await followTaskOutput(client, id, session.stdout, session.stderr);
          return 0;
        }
        const { data: steps = [] } = await client.GET('/tasks/id/{id}/steps', { params: { path: { id } } });
        if (flag(invocation, 'json')) printJson(session, steps);
        else if (steps.length === 0) session.stderr.write('No step has run yet.\n');
        else session.stdout.write(renderRuns(steps));
        return 0;
      },
    },
  ],
};
