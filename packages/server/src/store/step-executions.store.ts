import type { Schemas } from '@pipewright/types';
import { type Selectable, sql } from 'kysely';
import type { Dialect, QueryBuilder } from './dialect.js';
import type { StepExecutions } from './generated/database.js';
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
function currentAttempt(q: QueryBuilder, key: StepKey) {
  return q
    .selectFrom('tasks as t')
    .where('t.id', '=', key.task_id)
    .where('t.retry', '=', key.attempt)
    .where('t.start_time', '=', key.attempt_start);
}

export function createStepExecutionStore(d: Dialect, x: Executor) {
  const { q } = d;
  // The parameters of these INSERT ... SELECT stand alone in the SELECT, and take the types of
  // the columns they are inserted into (on PostgreSQL too).
  const step = (key: StepKey) =>
    [
      sql.val(key.task_id).as('task_id'),
      sql.ref('t.run').as('run'),
      sql.val(key.attempt).as('attempt'),
      sql.val(key.step_index).as('step_index'),
    ] as const;
  return {
    /** A step starts, with the process group of its process and who leads it once there is one. */
    async start(
      key: StepKey,
      label: string | undefined,
      time: string,
      process?: { group: number; identity: string | undefined },
    ): Promise<void> {
      await x.run(
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
            currentAttempt(q, key).select([
              ...step(key),
              sql.val(label ?? null).as('label'),
              sql.lit('started').as('status'),
              sql.val(time).as('start_time'),
              sql.val(process?.group ?? null).as('process_group'),
              sql.val(process?.identity ?? null).as('process_identity'),
            ]),
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
            currentAttempt(q, key).select([
              ...step(key),
              sql.val(label ?? null).as('label'),
              sql.val(ended.status).as('status'),
              sql.val(ended.exit_code).as('exit_code'),
              sql.val(startTime).as('start_time'),
              sql.val(ended.end_time).as('end_time'),
              sql.val(ended.output_truncated).as('output_truncated'),
            ]),
          ),
      );
    },
    /** Appends a chunk of output: chunks are never rewritten. */
    async appendOutput(key: StepKey, text: string): Promise<void> {
      await x.run(
        q
          .insertInto('step_output_chunks')
          .columns(['task_id', 'run', 'attempt', 'step_index', 'seq', 'text'])
          .expression(
            currentAttempt(q, key).select((eb) => [
              ...step(key),
              eb
                .selectFrom('step_output_chunks as c')
                .select(eb.fn.coalesce(sql<number>`max(${sql.ref('c.seq')}) + 1`, sql.lit(0)).as('seq'))
                .where('c.task_id', '=', key.task_id)
                .whereRef('c.run', '=', 't.run')
                .where('c.attempt', '=', key.attempt)
                .where('c.step_index', '=', key.step_index)
                .as('seq'),
              sql.val(text).as('text'),
            ]),
          ),
      );
    },
    async end(key: StepKey, result: StepEnd, time: string): Promise<void> {
      await x.run(
        q
          .updateTable('step_executions')
          .set({ ...endColumns(result, time), process_group: null, process_identity: null })
          .where('task_id', '=', key.task_id)
          .where('run', '=', currentAttempt(q, key).select('t.run'))
          .where('attempt', '=', key.attempt)
          .where('step_index', '=', key.step_index)
          .where('status', '=', sql.lit('started')),
      );
    },
    /** Process groups of the steps marked running, with who led each when recorded. */
    async runningProcessGroups(): Promise<{ group: number; identity: string | undefined }[]> {
      // Through the partial index step_executions_running: its WHERE term is written as the
      // index's is, with a literal, for the planner to match it.
      const rows = await x.all(
        q
          .selectFrom('step_executions')
          .select(['process_group', 'process_identity'])
          .where('status', '=', sql.lit('started'))
          .where('process_group', 'is not', null)
          .$narrowType<{ process_group: number }>(),
      );
      return rows.map((row) => ({ group: row.process_group, identity: row.process_identity ?? undefined }));
    },
    /**
     * Steps of a task still marked started when it can no longer run them: after a crash, or at
     * a restart, which keeps them in the run they belong to while their process is stopped.
     */
    async abortStarted(taskId: string, time: string): Promise<void> {
      await x.run(
        q
          .updateTable('step_executions')
          .set({ status: sql.lit('aborted'), end_time: time, process_group: null, process_identity: null })
          .where('task_id', '=', taskId)
          .where('status', '=', sql.lit('started')),
      );
    },
    /** The steps of every run of the task, or of one, in order of run, attempt and index. */
    async ofTask(taskId: string, run?: number): Promise<StepExecution[]> {
      // Every run, or one (`run` given), through the primary key (task_id, run, attempt, step_index).
      const rows = await x.all(
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
          .where((eb) =>
            eb.or([eb(eb.cast(eb.val(run ?? null), 'integer'), 'is', null), eb('s.run', '=', run ?? null)]),
          )
          .orderBy('s.run')
          .orderBy('s.attempt')
          .orderBy('s.step_index'),
      );
      return rows.map((row) => toStepExecution(row as StepRow));
    },
  };
}
