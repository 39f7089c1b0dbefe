import { type ApiClient, getScratchpadEntry, setScratchpadEntry } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
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
import { sharedTestServer } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';

// The purger runs on a clock of the test's own, moved days ahead of the pipelines' real end
// times; its passes are the test's to run. The server keeps pipelines without a retention of
// their own 60 days, their step output 10, events 30.
let now = new Date();
const server = sharedTestServer({
  purger: { clock: () => now, pipelineDays: 60, stepOutputDays: 10, eventDays: 30 },
});

const DAY_MS = 86_400_000;
const daysAfter = (time: string | undefined, days: number, extraMs = 1000) =>
  new Date(Date.parse(time ?? '') + days * DAY_MS + extraMs);

/** A pass of the purger at `time`. */
async function purgeAt(time: Date) {
  now = time;
  return server.purger?.purgeOnce();
}

const notFound = { status: 404 };

/** Installs `specs` with command `go` starting `pipelines`, executes it; returns the client, execution and pipeline ids. */
async function executeGo(specs: unknown[], pipelines: string[]) {
  const { client } = await projectWith(server, [...specs, command('go', pipelines)]);
  const { data: execution } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: await resourceId(client, 'command', 'go') } },
    body: {},
  });
  if (!execution) throw new Error('no execution');
  return { client, execution, pipelineIds: execution.pipeline_ids };
}

const get = {
  pipeline: (client: ApiClient, id: string) =>
    client.GET('/pipelines/id/{id}', { params: { path: { id } } }).then((r) => r.data),
  task: (client: ApiClient, id: string) =>
    client.GET('/tasks/id/{id}', { params: { path: { id } } }).then((r) => r.data),
  event: (client: ApiClient, id: string) =>
    client.GET('/events/id/{id}', { params: { path: { id } } }).then((r) => r.data),
  execution: (client: ApiClient, id: string) =>
    client.GET('/command_executions/id/{id}', { params: { path: { id } } }).then((r) => r.data),
};

const echo = task('echo', { steps: [{ code: 'echo hello' }] });

describe('retention', () => {
  it('deletes a finished pipeline with its tasks, steps and scratchpad once its retention has passed', async () => {
    const { client, execution, pipelineIds } = await executeGo(
      [echo, pipeline('kept-7', [{ task: 'echo' }], { retention: 7 })],
      ['kept-7'],
    );
    const id = pipelineIds[0] ?? '';
    const ended = await finished(client, id);
    await setScratchpadEntry(client, id, 'note', 'kept with the pipeline');
    const [taskOfIt] = await tasksOf(client, id);

    await purgeAt(daysAfter(ended.end_time, 7, -60_000));
    expect(await get.pipeline(client, id)).toMatchObject({ id, status: 'successful' });
    expect(await getScratchpadEntry(client, id, 'note')).toBe('kept with the pipeline');

    const counts = await purgeAt(daysAfter(ended.end_time, 7));
    expect(counts?.pipelines).toBeGreaterThanOrEqual(1);
    await expect(get.pipeline(client, id)).rejects.toMatchObject(notFound);
    await expect(get.task(client, taskOfIt?.id ?? '')).rejects.toMatchObject(notFound);
    await expect(
      client.GET('/tasks/id/{id}/steps', { params: { path: { id: taskOfIt?.id ?? '' } } }),
    ).rejects.toMatchObject(notFound);
    await expect(getScratchpadEntry(client, id, 'note')).rejects.toMatchObject(notFound);
    // Its event and command execution, 7 days old, are kept 30 days, then go.
    expect(await get.event(client, execution.event_id)).toMatchObject({ id: execution.event_id });
    expect(await get.execution(client, execution.id)).toMatchObject({ id: execution.id });

    await purgeAt(daysAfter(execution.execution_time, 30));
    await expect(get.event(client, execution.event_id)).rejects.toMatchObject(notFound);
    await expect(get.execution(client, execution.id)).rejects.toMatchObject(notFound);
  });

  it('never deletes a pipeline that has not finished, nor its event, command execution or scratchpad', async () => {
    const { client, execution, pipelineIds } = await executeGo(
      [
        task('wait', { steps: [{ command: 'sleep', arguments: ['30'] }] }),
        pipeline('slow', [{ task: 'wait' }], { retention: 1 }),
      ],
      ['slow'],
    );
    const id = pipelineIds[0] ?? '';
    await waitFor(
      () => get.pipeline(client, id),
      (read) => read?.status === 'started',
    );
    await setScratchpadEntry(client, id, 'state', 'running');

    await purgeAt(new Date(Date.now() + 1000 * DAY_MS));
    expect(await get.pipeline(client, id)).toMatchObject({ status: 'started' });
    expect(await getScratchpadEntry(client, id, 'state')).toBe('running');
    expect(await get.event(client, execution.event_id)).toMatchObject({ id: execution.event_id });
    expect(await get.execution(client, execution.id)).toMatchObject({ id: execution.id });

    // Once aborted it has finished, and a day later it goes, its event and execution with it.
    await client.POST('/pipelines/id/{id}/abort', { params: { path: { id } } });
    const aborted = await finished(client, id);
    await purgeAt(daysAfter(aborted.end_time, 1000));
    await expect(get.pipeline(client, id)).rejects.toMatchObject(notFound);
    await expect(get.event(client, execution.event_id)).rejects.toMatchObject(notFound);
    await expect(get.execution(client, execution.id)).rejects.toMatchObject(notFound);
  });

  it('keeps a restarted pipeline until it has finished again and its retention has passed', async () => {
    const { client, pipelineIds } = await executeGo(
      [echo, pipeline('again', [{ task: 'echo' }], { retention: 1 })],
      ['again'],
    );
    const id = pipelineIds[0] ?? '';
    const first = await finished(client, id);
    await client.POST('/pipelines/id/{id}/restart', { params: { path: { id } } });
    // A day after its first end: restarted, it has not finished since, or did a moment ago.
    await purgeAt(daysAfter(first.end_time, 1, 1));
    expect(await get.pipeline(client, id)).toMatchObject({ id });
    const second = await finished(client, id);
    await purgeAt(daysAfter(second.end_time, 1));
    await expect(get.pipeline(client, id)).rejects.toMatchObject(notFound);
  });

  it('empties the step output of pipelines without a retention after the step output retention, then deletes them after the server retention', async () => {
    const { client, execution, pipelineIds } = await executeGo(
      [echo, pipeline('plain', [{ task: 'echo' }])],
      ['plain'],
    );
    const id = pipelineIds[0] ?? '';
    const ended = await finished(client, id);
    const [taskOfIt] = await tasksOf(client, id);
    const taskId = taskOfIt?.id ?? '';

    await purgeAt(daysAfter(ended.end_time, 10, -60_000));
    expect(await stepsOf(client, taskId)).toEqual([
      expect.objectContaining({ output: 'hello\n', output_truncated: false }),
    ]);

    const counts = await purgeAt(daysAfter(ended.end_time, 10));
    expect(counts?.step_outputs).toBeGreaterThanOrEqual(1);
    expect(await stepsOf(client, taskId)).toEqual([
      expect.objectContaining({ status: 'successful', exit_code: 0, output: '', output_truncated: true }),
    ]);
    expect(await get.pipeline(client, id)).toMatchObject({ id, status: 'successful' });

    // Past the event retention, the event stays while its pipeline does.
    await purgeAt(daysAfter(ended.end_time, 59));
    expect(await get.pipeline(client, id)).toMatchObject({ id });
    expect(await get.event(client, execution.event_id)).toMatchObject({ id: execution.event_id });
    expect(await get.execution(client, execution.id)).toMatchObject({ id: execution.id });

    await purgeAt(daysAfter(ended.end_time, 60));
    await expect(get.pipeline(client, id)).rejects.toMatchObject(notFound);
    await expect(get.task(client, taskId)).rejects.toMatchObject(notFound);
    await expect(get.event(client, execution.event_id)).rejects.toMatchObject(notFound);
    await expect(get.execution(client, execution.id)).rejects.toMatchObject(notFound);
  });

  it('keeps the step output of a pipeline with a retention of its own for that retention', async () => {
    const { client, pipelineIds } = await executeGo(
      [echo, pipeline('long', [{ task: 'echo' }], { retention: 365 })],
      ['long'],
    );
    const id = pipelineIds[0] ?? '';
    const ended = await finished(client, id);
    const [taskOfIt] = await tasksOf(client, id);
    await purgeAt(daysAfter(ended.end_time, 364));
    expect(await stepsOf(client, taskOfIt?.id ?? '')).toEqual([
      expect.objectContaining({ output: 'hello\n', output_truncated: false }),
    ]);
    await purgeAt(daysAfter(ended.end_time, 365));
    await expect(get.pipeline(client, id)).rejects.toMatchObject(notFound);
  });
});
