import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiClient } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import { finished, pipeline, startMain, task, tasksOf } from '../helpers/projects.js';
import { rawRequest } from '../helpers/raw.js';
import { sharedTestServer } from '../helpers/test-server.js';

// Every run of a task is kept across restarts of its pipeline: its step executions are
// numbered by `run`, the task's `run` is its latest, and retention treats every run alike.
// The purger runs on a clock of the test's own, which keeps step output 10 days.

let now = new Date();
const server = sharedTestServer({ purger: { clock: () => now, stepOutputDays: 10 } });
const start = (specs: unknown[]) => startMain(server, specs);

const path = (id: string) => ({ params: { path: { id } } });

async function taskNamed(client: ApiClient, pipelineId: string, name: string) {
  const found = (await tasksOf(client, pipelineId)).find((t) => t.name === name);
  if (!found) throw new Error(`no task ${name}`);
  return found;
}

/** The step executions of a task (of one run with `run`), as [run, attempt, status, output]. */
async function runsOf(client: ApiClient, taskId: string, run?: number) {
  const { data } = await client.GET('/tasks/id/{id}/steps', {
    params: { path: { id: taskId }, query: run === undefined ? {} : { run } },
  });
  return (data ?? []).map((step) => [step.run, step.attempt, step.status, step.output]);
}

describe('listStepExecutions', () => {
  it('keeps every run of a restarted task, numbered, and lists one run with `run`', async () => {
    const dir = server.tempDir();
    // Fails (each attempt) until the file `fixed` exists, saying which try it is.
    const flaky = `echo try >> "$DIR/tries"; echo "try $(wc -l < "$DIR/tries")"; [ -e "$DIR/fixed" ]`;
    const { client, pipelineId } = await start([
      task('ok', { steps: [{ code: 'echo ok' }] }),
      task('flaky', { environment: { DIR: dir }, steps: [{ code: flaky }] }),
      pipeline('main', [{ task: 'ok' }, { task: 'flaky', dependencies: ['ok'], nb_retries: 1 }]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('failed');
    const ok = await taskNamed(client, pipelineId, 'ok');
    const flakyTask = await taskNamed(client, pipelineId, 'flaky');
    expect(flakyTask).toMatchObject({ status: 'failed', run: 1, retry: 1 });

    writeFileSync(join(dir, 'fixed'), '');
    await client.POST('/pipelines/id/{id}/restart_from_failure', path(pipelineId));
    expect((await finished(client, pipelineId)).status).toBe('successful');
    expect(await taskNamed(client, pipelineId, 'flaky')).toMatchObject({
      status: 'successful',
      run: 2,
      retry: 0,
    });
    expect(await runsOf(client, flakyTask.id)).toEqual([
      [1, 0, 'failed', 'try 1\n'],
      [1, 1, 'failed', 'try 2\n'],
      [2, 0, 'successful', 'try 3\n'],
    ]);
    expect(await runsOf(client, flakyTask.id, 1)).toEqual([
      [1, 0, 'failed', 'try 1\n'],
      [1, 1, 'failed', 'try 2\n'],
    ]);
    expect(await runsOf(client, flakyTask.id, 2)).toEqual([[2, 0, 'successful', 'try 3\n']]);
    expect(await runsOf(client, flakyTask.id, 3)).toEqual([]);
    // The successful task did not run again: still its first run.
    expect(await taskNamed(client, pipelineId, 'ok')).toMatchObject({ run: 1, end_time: ok.end_time });
    expect(await runsOf(client, ok.id)).toEqual([[1, 0, 'successful', 'ok\n']]);

    // A restart runs every task again: each starts its next run.
    await client.POST('/pipelines/id/{id}/restart', path(pipelineId));
    expect((await finished(client, pipelineId)).status).toBe('successful');
    expect(await taskNamed(client, pipelineId, 'ok')).toMatchObject({ run: 2, retry: 0 });
    expect(await runsOf(client, ok.id)).toEqual([
      [1, 0, 'successful', 'ok\n'],
      [2, 0, 'successful', 'ok\n'],
    ]);
    expect((await runsOf(client, flakyTask.id)).map(([run, attempt]) => [run, attempt])).toEqual([
      [1, 0],
      [1, 1],
      [2, 0],
      [3, 0],
    ]);
  });

  it.each([
    ['0', 'below 1'],
    ['first', 'not a number'],
  ])('answers invalid_query_parameter for a run %s (%s)', async (run) => {
    const { project, client, pipelineId } = await start([
      task('t', { steps: [{ command: 'true' }] }),
      pipeline('main', [{ task: 't' }]),
    ]);
    const [t] = await tasksOf(client, pipelineId);
    const response = await rawRequest(server.baseUrl, server.ca, {
      method: 'GET',
      path: `/v0/tasks/id/${t?.id}/steps?run=${run}`,
      headers: { authorization: `Bearer ${server.adminKey}`, 'x-service-project-id': project.id },
    });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ code: 'invalid_query_parameter', data: { parameter: 'run' } });
  });
});

describe('retention of restarted pipelines', () => {
  it('empties the output of every run once the step output retention has passed since the last end', async () => {
    const dir = server.tempDir();
    // Prints in its first run only: its second run's step has no output to cut.
    const { client, pipelineId } = await start([
      task('t', { environment: { DIR: dir }, steps: [{ code: '[ -e "$DIR/quiet" ] || echo loud' }] }),
      pipeline('main', [{ task: 't' }]),
    ]);
    await finished(client, pipelineId);
    writeFileSync(join(dir, 'quiet'), '');
    await client.POST('/pipelines/id/{id}/restart', path(pipelineId));
    const second = await finished(client, pipelineId);
    const [t] = await tasksOf(client, pipelineId);
    const steps = async () => {
      const { data } = await client.GET('/tasks/id/{id}/steps', path(t?.id ?? ''));
      return (data ?? []).map((step) => [step.run, step.output, step.output_truncated]);
    };

    now = new Date(Date.parse(second.end_time ?? '') + 10 * 86_400_000 - 60_000);
    await server.purger?.purgeOnce();
    expect(await steps()).toEqual([
      [1, 'loud\n', false],
      [2, '', false],
    ]);
    now = new Date(Date.parse(second.end_time ?? '') + 10 * 86_400_000 + 1000);
    await server.purger?.purgeOnce();
    expect(await steps()).toEqual([
      [1, '', true],
      [2, '', false],
    ]);
  });
});
