import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiClient, type TaskOutputMessage, taskOutput } from '@pipewright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  command,
  finished,
  pipeline,
  projectWith,
  resourceId,
  stepsOf,
  task,
  tasksOf,
} from '../helpers/projects.js';
import { collect } from '../helpers/streams.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';

// The stream of a task's output (GET /tasks/id/{id}/output), read through the client's helper.

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'pipewright-output-'));
});
afterAll(async () => {
  // Releases any step still waiting, should a test have failed before it did.
  writeFileSync(join(dir, 'go'), '');
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A project whose command `go` runs one task of `steps`, with `extra` on its pipeline entry. */
async function runTask(steps: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  const { client } = await projectWith(server, [
    task('t', { steps }),
    pipeline('main', [{ task: 't', ...extra }]),
    command('go', ['main']),
  ]);
  const { data } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: await resourceId(client, 'command', 'go') } },
    body: {},
  });
  const pipelineId = data?.pipeline_ids[0] as string;
  const [only] = await waitFor(
    () => tasksOf(client, pipelineId),
    (tasks) => tasks.length === 1,
  );
  return { client, pipelineId, taskId: only?.id as string };
}

/** A shell loop that waits (bounded) for `file` in the test's directory. */
const waitForFile = (file: string) =>
  `i=0; while [ ! -f '${join(dir, file)}' ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done`;

/** [event, text or status, offset or retry] of each message. */
function summary(message: TaskOutputMessage): unknown[] {
  if (message.event === 'output')
    return ['output', message.data.text, message.data.offset, message.data.attempt];
  if (message.event === 'task') return ['task', message.data.status, message.data.retry];
  return [message.event, message.data];
}

async function readAll(client: ApiClient, taskId: string, offset?: number, lastEventId?: string) {
  return collect(
    taskOutput(client, taskId, offset, lastEventId === undefined ? {} : { lastEventId }),
    (message) => message.event === 'end',
  );
}

describe('streamTaskOutput', () => {
  it('sends the output from an offset, then what the step prints live, to the end of the task', async () => {
    const { client, taskId } = await runTask([
      { code: `printf 'first line\\n'; ${waitForFile('go-live')}; printf 'second line\\n'` },
    ]);
    await waitFor(
      () => stepsOf(client, taskId),
      (steps) => steps[0]?.output === 'first line\n',
    );
    const messages = taskOutput(client, taskId, 6);
    const opening = await collect(messages, (message) => message.event === 'output');
    expect(opening.map(summary)).toEqual([
      ['start', { reset: false }],
      ['task', 'started', 0],
      ['output', 'line\n', 6, 0],
    ]);
    expect(opening.map((message) => message.id)).toEqual(['6', '6', '11']);
    writeFileSync(join(dir, 'go-live'), '');
    const rest = await collect(messages, (message) => message.event === 'end');
    expect(rest.map(summary)).toEqual([
      ['output', 'second line\n', 11, 0],
      ['task', 'successful', 0],
      ['end', { reason: 'task_ended' }],
    ]);
    expect((await messages.next()).done).toBe(true);
    // Resumed after the first line, once the task has ended: the rest, and the end at once.
    expect((await readAll(client, taskId, undefined, '11')).map(summary)).toEqual([
      ['start', { reset: false }],
      ['task', 'successful', 0],
      ['output', 'second line\n', 11, 0],
      ['end', { reason: 'task_ended' }],
    ]);
  });

  it('sends each of several streams of a task its own part, then every line printed live', async () => {
    const { client, taskId } = await runTask([
      { code: `printf 'first line\\n'; ${waitForFile('go-many')}; printf 'second line\\n'` },
    ]);
    await waitFor(
      () => stepsOf(client, taskId),
      (steps) => steps[0]?.output === 'first line\n',
    );
    // From the start, from inside the first line, and from its end: what each has read when the
    // step prints again, then the rest.
    const opened = [
      { offset: 0, opening: [['output', 'first line\n', 0, 0]] },
      { offset: 6, opening: [['output', 'line\n', 6, 0]] },
      { offset: 11, opening: [] },
    ].map(({ offset, opening }) => ({ messages: taskOutput(client, taskId, offset), offset, opening }));
    for (const { messages, opening } of opened) {
      const read = await collect(
        messages,
        (message) => message.event === (opening.length > 0 ? 'output' : 'task'),
      );
      expect(read.map(summary)).toEqual([['start', { reset: false }], ['task', 'started', 0], ...opening]);
    }
    writeFileSync(join(dir, 'go-many'), '');
    for (const { messages } of opened) {
      const rest = await collect(messages, (message) => message.event === 'end');
      expect(rest.map(summary)).toEqual([
        ['output', 'second line\n', 11, 0],
        ['task', 'successful', 0],
        ['end', { reason: 'task_ended' }],
      ]);
      expect(rest[0]?.id).toBe('23');
    }
  });

  it('sends the output of every attempt, and the task as it is retried', async () => {
    const marker = join(dir, 'failed-once');
    const { client, taskId, pipelineId } = await runTask(
      [
        {
          code: `if [ -f '${marker}' ]; then echo second; else touch '${marker}'; echo first; exit 1; fi`,
        },
      ],
      { nb_retries: 1 },
    );
    const read = await readAll(client, taskId);
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const outputs = read.filter((message) => message.event === 'output').map(summary);
    expect(outputs).toEqual([
      ['output', 'first\n', 0, 0],
      ['output', 'second\n', 6, 1],
    ]);
    const last = read.filter((message) => message.event === 'task').at(-1);
    expect(last && summary(last)).toEqual(['task', 'successful', 1]);
    expect(read.at(-1)?.data).toEqual({ reason: 'task_ended' });
  });

  it('starts at the next character from inside one, and afresh from past the end', async () => {
    const { client, taskId, pipelineId } = await runTask([{ code: `printf 'éa\\n'` }]);
    await finished(client, pipelineId);
    expect((await readAll(client, taskId, 1)).map(summary)).toEqual([
      ['start', { reset: false }],
      ['task', 'successful', 0],
      ['output', 'a\n', 2, 0],
      ['end', { reason: 'task_ended' }],
    ]);
    expect((await readAll(client, taskId, 100)).map(summary)).toEqual([
      ['start', { reset: true }],
      ['task', 'successful', 0],
      ['output', 'éa\n', 0, 0],
      ['end', { reason: 'task_ended' }],
    ]);
  });

  it('answers 404 for a task that is not of the project', async () => {
    const { client } = await runTask([{ command: 'true' }]);
    await expect(taskOutput(client, '2FwLlLguRIax1dYYxn9IyW1MxjF').next()).rejects.toMatchObject({
      status: 404,
      code: 'unknown_task',
    });
  });
});
