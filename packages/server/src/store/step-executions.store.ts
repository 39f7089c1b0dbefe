import type { Schemas } from '@pipewright/types';
import { type Selectable, sql } from 'kysely';
import type { Dialect, QueryBuilder } from './dialect.js';
import type { StepExecutions } from './generated/database.js';
import { prepared } from './prepared.js';
import type { Executor } from './sql.js';

type StepExecution = Schemas['StepExecution'];

/** A row of step_executions with its output, its status one of a step's statuses. */
type StepRow = Omit<Selectable<StepExecutions>, 'status'> & {
  status: StepExecution['status'];
  output: string;
};

function toStepExecution(row: StepRow): StepExecution {
  return {
    task_id: row.task_id,
    run: row.run,
    attempt: row.attempt,
    index: row.step_index,
    ...(row.label === null ? {} : { label: row.label }),
    status: row.status,
    ...(row.exit_code === null ? {} : { exit_code: row.exit_code }),
    start_time: row.start_time,
    ...(row.end_time === null ? {} : { end_time: row.end_time }),
    output: row.output,
    output_truncated: row.output_truncated === 1,
  };
}

/**
 * A step of one attempt of a task, as its runner knows it: `attempt_start` is the attempt's start
 * (the claim's), which no other attempt of any run shares. The run the step belongs to is the
 * task's current one, read from the task while `attempt_start` is still its start.
 */
export interface StepKey {
  task_id: string;
  attempt: number;
  step_index: number;
  attempt_start: string;
}

/** How a step ended. */
export interface StepEnd {
  status: StepExecution['status'];
  exit_code?: number | undefined;
  output_truncated: boolean;
}

const endColumns = (result: StepEnd, time: string) => ({
  status: result.status,
  exit_code: result.exit_code ?? null,
  end_time: time,
  output_truncated: result.output_truncated ? 1 : 0,
});

/**
 * The task's run while the attempt is still the task's current one, in a statement's FROM: a
 * restart starts the task's next run (marking the steps still started aborted) while its aborted
 * attempt may still print and end, and that attempt's writes must then change nothing.
 */
function currentAttempt(q: QueryBuilder, taskId: string, attempt: number, attemptStart: string) {
  return q
    .selectFrom('tasks as t')
    .where('t.id', '=', taskId)
    .where('t.retry', '=', attempt)
    .where('t.start_time', '=', attemptStart);
}

export function createStepExecutionStore(d: Dialect, x: Executor) {
  const { q } = d;
  // The parameters of these INSERT ... SELECT stand alone in the SELECT, and take the types of
  // the columns they are inserted into (on PostgreSQL too).
  const step = (taskId: string, attempt: number, stepIndex: number) =>
    [
      sql.val(taskId).as('task_id'),
      sql.ref('t.run').as('run'),
      sql.val(attempt).as('attempt'),
      sql.val(stepIndex).as('step_index'),
    ] as const;
  // Each query's first four arguments are a StepKey's task_id, attempt, step_index and attempt_start.
  const start = prepared(
    8,
    (
      taskId: string,
      attempt: number,
      stepIndex: number,
      attemptStart: string,
      label: string | null,
      time: string,
      group: number | null,
      identity: string | null,
    ) =>
      q
        .insertInto('step_executions')
        .columns([
          'task_id',
          'run',
          'attempt',
          'step_index',
          'label',
          'status',
          'start_time',
          'process_group',
          'process_identity',
        ])
        .expression(
          currentAttempt(q, taskId, attempt, attemptStart).select([
            ...step(taskId, attempt, stepIndex),
            sql.val(label).as('label'),
            sql.lit('started').as('status'),
            sql.val(time).as('start_time'),
            sql.val(group).as('process_group'),
            sql.val(identity).as('process_identity'),
          ]),
        ),
  );
  const insertEnded = prepared(
    10,
    (
      taskId: string,
      attempt: number,
      stepIndex: number,
      attemptStart: string,
      label: string | null,
      status: StepExecution['status'],
      exitCode: number | null,
      startTime: string,
      endTime: string,
      outputTruncated: number,
    ) =>
      q
        .insertInto('step_executions')
        .columns([
          'task_id',
          'run',
          'attempt',
          'step_index',
          'label',
          'status',
          'exit_code',
          'start_time',
          'end_time',
          'output_truncated',
        ])
        .expression(
          currentAttempt(q, taskId, attempt, attemptStart).select([
            ...step(taskId, attempt, stepIndex),
            sql.val(label).as('label'),
            sql.val(status).as('status'),
            sql.val(exitCode).as('exit_code'),
            sql.val(startTime).as('start_time'),
            sql.val(endTime).as('end_time'),
            sql.val(outputTruncated).as('output_truncated'),
          ]),
        ),
  );
  const appendOutput = prepared(
    5,
    (taskId: string, attempt: number, stepIndex: number, attemptStart: string, text: string) =>
      q
        .insertInto('step_output_chunks')
        .columns(['task_id', 'run', 'attempt', 'step_index', 'seq', 'text'])
        .expression(
          currentAttempt(q, taskId, attempt, attemptStart).select((eb) => [
            ...step(taskId, attempt, stepIndex),
            eb
              .selectFrom('step_output_chunks as c')
              .select(eb.fn.coalesce(sql<number>`max(${sql.ref('c.seq')}) + 1`, sql.lit(0)).as('seq'))
              .where('c.task_id', '=', taskId)
              .whereRef('c.run', '=', 't.run')
              .where('c.attempt', '=', attempt)
              .where('c.step_index', '=', stepIndex)
              .as('seq'),
            sql.val(text).as('text'),
          ]),
        ),
  );
  const end = prepared(
    8,
    (
      taskId: string,
      attempt: number,
      stepIndex: number,
      attemptStart: string,
      status: StepExecution['status'],
      exitCode: number | null,
      endTime: string,
      outputTruncated: number,
    ) =>
      q
        .updateTable('step_executions')
        .set({
          status,
          exit_code: exitCode,
          end_time: endTime,
          output_truncated: outputTruncated,
          process_group: null,
          process_identity: null,
        })
        .where('task_id', '=', taskId)
        .where('run', '=', currentAttempt(q, taskId, attempt, attemptStart).select('t.run'))
        .where('attempt', '=', attempt)
        .where('step_index', '=', stepIndex)
        .where('status', '=', sql.lit('started')),
  );
  const abortStarted = prepared(2, (taskId: string, time: string) =>
    q
      .updateTable('step_executions')
      .set({ status: sql.lit('aborted'), end_time: time, process_group: null, process_identity: null })
      .where('task_id', '=', taskId)
      .where('status', '=', sql.lit('started')),
  );
  // Every run, or one (`run` not null), through the primary key (task_id, run, attempt, step_index).
  const ofTask = prepared(2, (taskId: string, run: number | null) =>
    q
      .selectFrom('step_executions as s')
      .selectAll('s')
      .select((eb) =>
        eb.fn
          .coalesce(
            eb
              .selectFrom('step_output_chunks as c')
              .select((c) => d.concatenated(c.ref('c.text'), c.ref('c.seq')).as('text'))
              .whereRef('c.task_id', '=', 's.task_id')
              .whereRef('c.run', '=', 's.run')
              .whereRef('c.attempt', '=', 's.attempt')
              .whereRef('c.step_index', '=', 's.step_index'),
            sql.lit(''),
          )
          .as('output'),
      )
      .where('s.task_id', '=', taskId)
      // One statement with or without a run; the run's type is written for PostgreSQL,
      // which cannot infer the type of a parameter that stands alone.
      .where((eb) => eb.or([eb(eb.cast(eb.val(run), 'integer'), 'is', null), eb('s.run', '=', run)]))
      .orderBy('s.run')
      .orderBy('s.attempt')
      .orderBy('s.step_index'),
  );
  return {
    /** A step starts, with the process group of its process and who leads it once there is one. */
    async start(
      key: StepKey,
      label: string | undefined,
      time: string,
      process?: { group: number; identity: string | undefined },
    ): Promise<void> {
      await x.run(
        start(
          key.task_id,
          key.attempt,
          key.step_index,
          key.attempt_start,
          label ?? null,
          time,
          process?.group ?? null,
          process?.identity ?? null,
        ),
      );
    },
    /** A step that ended before it was recorded as started (one that ends at once): one write. */
    async insertEnded(
      key: StepKey,
      label: string | undefined,
      startTime: string,
      result: StepEnd,
      endTime: string,
    ): Promise<void> {
      const ended = endColumns(result, endTime);
      await x.run(
        insertEnded(
          key.task_id,
          key.attempt,
          key.step_index,
          key.attempt_start,
          label ?? null,
          ended.status,
          ended.exit_code,
          startTime,
          ended.end_time,
          ended.output_truncated,
        ),
      );
    },
    /** Appends a chunk of output: chunks are never rewritten. */
    async appendOutput(key: StepKey, text: string): Promise<void> {
      await x.run(appendOutput(key.task_id, key.attempt, key.step_index, key.attempt_start, text));
    },
    async end(key: StepKey, result: StepEnd, time: string): Promise<void> {
      const ended = endColumns(result, time);
      await x.run(
        end(
          key.task_id,
          key.attempt,
          key.step_index,
          key.attempt_start,
          ended.status,
          ended.exit_code,
          ended.end_time,
          ended.output_truncated,
        ),
      );
    },
    /**
     * Process groups of the steps marked running in the tasks of instance `instance` (or of no
     * instance: claimed before leases), with who led each when recorded.
     */
    async runningProcessGroups(instance: string): Promise<{ group: number; identity: string | undefined }[]> {
      // Through the partial index step_executions_running: its WHERE term is written as the
      // index's is, with a literal, for the planner to match it.
      const rows = await x.all(
        q
          .selectFrom('step_executions')
          .innerJoin('tasks', 'tasks.id', 'step_executions.task_id')
          .select(['step_executions.process_group', 'step_executions.process_identity'])
          .where('step_executions.status', '=', sql.lit('started'))
          .where('step_executions.process_group', 'is not', null)
          .where((eb) =>
            eb.or([eb('tasks.server_instance', '=', instance), eb('tasks.server_instance', 'is', null)]),
          )
          .$narrowType<{ process_group: number }>(),
      );
      return rows.map((row) => ({ group: row.process_group, identity: row.process_identity ?? undefined }));
    },
    /**
     * Steps of a task still marked started when it can no longer run them: after a crash, or at
     * a restart, which keeps them in the run they belong to while their process is stopped.
     */
    async abortStarted(taskId: string, time: string): Promise<void> {
      await x.run(abortStarted(taskId, time));
    },
    /** The steps of every run of the task, or of one, in order of run, attempt and index. */
    async ofTask(taskId: string, run?: number): Promise<StepExecution[]> {
      const rows = await x.all(ofTask(taskId, run ?? null));
      return rows.map((row) => toStepExecution(row as StepRow));
    },
  };
}
