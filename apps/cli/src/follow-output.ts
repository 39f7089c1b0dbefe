import { type ApiClient, type Schemas, taskOutput } from '@pipewright/client';
import { CliError } from './errors.js';
import type { Terminal } from './session.js';
import { TRUNCATED, taskOutputHeading } from './steps.js';

type StepExecution = Schemas['StepExecution'];
type StepOutputChunk = Schemas['StepOutputChunk'];

const isOf = (step: StepExecution | undefined, chunk: StepOutputChunk) =>
  step !== undefined &&
  step.run === chunk.run &&
  step.attempt === chunk.attempt &&
  step.index === chunk.index;

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');

/** `text` without its first `bytes` bytes of UTF-8 (a whole number of characters). */
const afterBytes = (text: string, bytes: number) =>
  Buffer.from(text, 'utf8').subarray(bytes).toString('utf8');

/**
 * Prints the output of a task's steps as they write it, from the beginning (every run and
 * attempt), until the task has ended; resolves then. Each step execution is headed as `tasks
 * output` heads it, with how it stood when its first output came: a step still running is headed
 * `running`. `out` gets the output, `err` the note that no step ran.
 */
export async function followTaskOutput(
  client: ApiClient,
  taskId: string,
  out: Terminal,
  err: Terminal,
): Promise<void> {
  // The task's step executions as last read, how many of them are headed already, how many bytes
  // of the task's output are printed, and whether the last line printed is unfinished.
  let steps: StepExecution[] = [];
  let headed = 0;
  let printed = 0;
  let lineOpen = false;
  const write = (text: string) => {
    if (text === '') return;
    out.write(text);
    lineOpen = !text.endsWith('\n');
  };

  /**
   * Heads the step executions up to the one `chunk` is of (or all of them, at the end): those
   * between printed nothing. The one printed so far is ended first, as `tasks output` ends it.
   * The headings need the steps' labels and statuses, which the stream does not carry: they are
   * read then.
   */
  const headUpTo = async (chunk: StepOutputChunk | undefined) => {
    const { data } = await client.GET('/tasks/id/{id}/steps', { params: { path: { id: taskId } } });
    steps = data ?? [];
    if (lineOpen) write('\n');
    if (steps[headed - 1]?.output_truncated) write(TRUNCATED);
    const last = chunk ? steps.findIndex((step) => isOf(step, chunk)) : steps.length - 1;
    for (; headed <= last; headed += 1) write(taskOutputHeading(steps, headed));
  };

  for await (const message of taskOutput(client, taskId)) {
    if (message.event === 'output') {
      const chunk = message.data;
      // A stream that could not resume starts again from the beginning (`reset`): what was
      // printed already is skipped, by its place in the task's output.
      const end = chunk.offset + byteLength(chunk.text);
      if (end <= printed) continue;
      if (!isOf(steps[headed - 1], chunk)) await headUpTo(chunk);
      write(afterBytes(chunk.text, Math.max(0, printed - chunk.offset)));
      printed = end;
    } else if (message.event === 'end') {
      // The server stopping: the stream resumes by itself once it is back.
      if (message.data.reason === 'server_stopping') continue;
      if (message.data.reason !== 'task_ended')
        throw new CliError(`the server ended the stream of the output (${message.data.reason})`);
      await headUpTo(undefined);
      if (steps.length === 0) err.write('No step has run yet.\n');
      return;
    }
  }
}
