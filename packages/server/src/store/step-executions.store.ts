import type { Schemas } from '@pipewright/types';
import type { Db } from './db.js';

type StepExecution = Schemas['StepExecution'];

interface StepRow {
  task_id: string;
  run: number;
  attempt: number;
  step_index: number;
  label: string | null;
  status: StepExecution['status'];
  exit_code: number | null;
  start_time: string;
  end_time: string | null;
  output_truncated: number;
  output: string;
}

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
const CURRENT_ATTEMPT = `tasks t WHERE t.id = @task_id AND t.retry = @attempt AND t.start_time = @attempt_start`;

export function createStepExecutionStore(db: Db) {
  const start = db.prepare(
    `INSERT INTO step_executions (task_id, run, attempt, step_index, label, status, start_time, process_group,
                                  process_identity)
     SELECT @task_id, t.run, @attempt, @step_index, @label, 'started', @start_time, @process_group, @process_identity
     FROM ${CURRENT_ATTEMPT}`,
  );
  const insertEnded = db.prepare(
    `INSERT INTO step_executions (task_id, run, attempt, step_index, label, status, exit_code, start_time, end_time,
                                  output_truncated)
     SELECT @task_id, t.run, @attempt, @step_index, @label, @status, @exit_code, @start_time, @end_time, @output_truncated
     FROM ${CURRENT_ATTEMPT}`,
  );
  const append = db.prepare(
    `INSERT INTO step_output_chunks (task_id, run, attempt, step_index, seq, text)
     SELECT @task_id, t.run, @attempt, @step_index,
            (SELECT coalesce(max(c.seq) + 1, 0) FROM step_output_chunks c
             WHERE c.task_id = @task_id AND c.run = t.run AND c.attempt = @attempt AND c.step_index = @step_index),
            @text
     FROM ${CURRENT_ATTEMPT}`,
  );
  const end = db.prepare(
    `UPDATE step_executions SET status = @status, exit_code = @exit_code, end_time = @end_time,
                                output_truncated = @output_truncated, process_group = NULL,
                                process_identity = NULL
     WHERE task_id = @task_id AND run = (SELECT t.run FROM ${CURRENT_ATTEMPT}) AND attempt = @attempt
       AND step_index = @step_index AND status = 'started'`,
  );
  const abortStarted = db.prepare(
    `UPDATE step_executions SET status = 'aborted', end_time = @time, process_group = NULL,
                                process_identity = NULL
     WHERE task_id = @task_id AND status = 'started'`,
  );
  const runningGroups = db.prepare<[], { process_group: number; process_identity: string | null }>(
    `SELECT process_group, process_identity FROM step_executions
     WHERE status = 'started' AND process_group IS NOT NULL`,
  );
  // Every run, or one (`run` not null), through the primary key (task_id, run, attempt, step_index).
  const ofTask = db.prepare<{ task_id: string; run: number | null }, StepRow>(
    `SELECT s.*, coalesce((SELECT group_concat(c.text, '' ORDER BY c.seq) FROM step_output_chunks c
                           WHERE c.task_id = s.task_id AND c.run = s.run AND c.attempt = s.attempt
                             AND c.step_index = s.step_index), '') AS output
     FROM step_executions s WHERE s.task_id = @task_id AND (@run IS NULL OR s.run = @run)
     ORDER BY s.run, s.attempt, s.step_index`,
  );
  return {
    /** A step starts, with the process group of its process and who leads it once there is one. */
    start(
      key: StepKey,
      label: string | undefined,
      time: string,
      process?: { group: number; identity: string | undefined },
    ): void {
      start.run({
        ...key,
        label: label ?? null,
        start_time: time,
        process_group: process?.group ?? null,
        process_identity: process?.identity ?? null,
      });
    },
    /** A step that ended before it was recorded as started (one that ends at once): one write. */
    insertEnded(
      key: StepKey,
      label: string | undefined,
      startTime: string,
      result: StepEnd,
      endTime: string,
    ): void {
      insertEnded.run({
        ...key,
        label: label ?? null,
        start_time: startTime,
        ...endColumns(result, endTime),
      });
    },
    /** Appends a chunk of output: chunks are never rewritten. */
    appendOutput(key: StepKey, text: string): void {
      append.run({ ...key, text });
    },
    end(key: StepKey, result: StepEnd, time: string): void {
      end.run({ ...key, ...endColumns(result, time) });
    },
    /** Process groups of the steps marked running, with who led each when recorded. */
    runningProcessGroups(): { group: number; identity: string | undefined }[] {
      return runningGroups
        .all()
        .map((row) => ({ group: row.process_group, identity: row.process_identity ?? undefined }));
    },
    /**
     * Steps of a task still marked started when it can no longer run them: after a crash, or at
     * a restart, which keeps them in the run they belong to while their process is stopped.
     */
    abortStarted(taskId: string, time: string): void {
      abortStarted.run({ task_id: taskId, time });
    },
    /** The steps of every run of the task, or of one, in order of run, attempt and index. */
    ofTask(taskId: string, run?: number): StepExecution[] {
      return ofTask.all({ task_id: taskId, run: run ?? null }).map(toStepExecution);
    },
  };
}
