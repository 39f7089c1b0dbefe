import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiError, Schemas } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import {
  command,
  execute,
  finished,
  pipeline,
  projectWith,
  startMain,
  stepsOf,
  task,
  tasksOf,
} from '../helpers/projects.js';
import { sharedTestServer, uniqueName } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';

// Timeouts of steps and tasks, and the server's default: a step that runs past one is stopped
// as an abort stops it, and its task fails (or is retried) with a message naming the timeout.

const server = sharedTestServer({ scheduler: { graceMs: 500 } });

/** Whether a process is gone (a zombie left for an init that does not reap counts as gone). */
async function isGone(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/**
 * A step that ignores SIGTERM, as does the child it leaves running: only SIGKILL, after the
 * grace period, stops them. It writes their pids to $DIR/pids.
 */
const STUBBORN = [
  "trap '' TERM",
  `sh -c 'trap "" TERM; exec sleep 60' &`,
  'echo "$$ $!" > "$DIR/pids"',
  'wait',
].join('\n');

describe('step timeouts', () => {
  it('stops a step past its timeout as an abort does, and fails the task naming the step and the timeout', async () => {
    const dir = server.tempDir();
    const { client, pipelineId } = await startMain(server, [
      task('stuck', {
        environment: { DIR: dir },
        steps: [
          { label: 'Hang', code: STUBBORN, timeout: 1 },
          { label: 'Never', code: 'echo never' },
        ],
      }),
      pipeline('main', [{ task: 'stuck' }]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('failed');
    const [stuck] = await tasksOf(client, pipelineId);
    expect(stuck).toMatchObject({
      status: 'failed',
      failure_message: `step 1 "Hang" timed out: the step's timeout of 1 s passed`,
    });
    // Killed by SIGKILL: no exit status. The next step never started.
    const steps = await stepsOf(client, stuck?.id ?? '');
    expect(steps.map((s) => [s.index, s.status, s.exit_code])).toEqual([[0, 'failed', undefined]]);
    expect(steps[0]?.end_time).toBeDefined();
    // The whole process tree is gone: the step and the child it left, both deaf to SIGTERM.
    const pids = readFileSync(join(dir, 'pids'), 'utf8').trim().split(' ').map(Number);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(await waitFor(() => isGone(pid), Boolean)).toBe(true);
    await waitFor(
      async () => server.scheduler.runningCount,
      (n) => n === 0,
    );
  });
});

describe('task timeouts', () => {
  it("counts the task's timeout over all its steps, and stops the one running when it passes", async () => {
    // Twenty steps of 0.3 s each: more than the task's 2 s together, far less each.
    const steps = Array.from({ length: 20 }, (_, i) => ({ label: `Part ${i + 1}`, code: 'sleep 0.3' }));
    const { client, pipelineId } = await startMain(server, [
      task('long', { timeout: 2, steps }),
      pipeline('main', [{ task: 'long' }]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('failed');
    const [long] = await tasksOf(client, pipelineId);
    const executions = await stepsOf(client, long?.id ?? '');
    const last = executions.length;
    // Some steps ran to their end before the time of the task ran out, in another one.
    expect(last).toBeGreaterThan(1);
    expect(last).toBeLessThan(20);
    expect(executions.map((s) => s.status)).toEqual([...Array(last - 1).fill('successful'), 'failed']);
    expect(long?.failure_message).toBe(
      `step ${last} "Part ${last}" timed out: the task's timeout of 2 s passed`,
    );
  });

  it('retries a task that timed out, with its full time again', async () => {
    const dir = server.tempDir();
    // The first attempt hangs; the second ends at once. The retry starts after the first attempt's
    // timeout would have passed again: only a timer started afresh lets it succeed.
    const flaky = `n=$(cat "$DIR/count" 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > "$DIR/count"
echo "attempt $n"
[ "$n" -ge 2 ] || exec sleep 60`;
    const { client, pipelineId } = await startMain(server, [
      task('flaky', { timeout: 1, environment: { DIR: dir }, steps: [{ label: 'Try', code: flaky }] }),
      pipeline('main', [{ task: 'flaky', nb_retries: 1, retry_delay: 2 }]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const [flakyTask] = await tasksOf(client, pipelineId);
    expect(flakyTask).toMatchObject({ status: 'successful', retry: 1 });
    const steps = await stepsOf(client, flakyTask?.id ?? '');
    expect(steps.map((s) => [s.attempt, s.status, s.output])).toEqual([
      [0, 'failed', 'attempt 1\n'],
      [1, 'successful', 'attempt 2\n'],
    ]);
  });

  it('fails a task for good once every attempt has timed out', async () => {
    const { client, pipelineId } = await startMain(server, [
      task('hangs', { timeout: 1, steps: [{ code: 'exec sleep 60' }] }),
      pipeline('main', [{ task: 'hangs', nb_retries: 1 }]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('failed');
    const [hangs] = await tasksOf(client, pipelineId);
    expect(hangs).toMatchObject({
      status: 'failed',
      retry: 1,
      failure_message: "step 1 timed out: the task's timeout of 1 s passed",
    });
    const steps = await stepsOf(client, hangs?.id ?? '');
    expect(steps.map((s) => [s.attempt, s.status])).toEqual([
      [0, 'failed'],
      [1, 'failed'],
    ]);
  });
});

describe("the server's default task timeout", () => {
  const strict = sharedTestServer({ scheduler: { graceMs: 500, defaultTaskTimeoutSeconds: 1 } });

  it("stops a task without a timeout of its own, and a task's own timeout overrides it", async () => {
    const dir = server.tempDir();
    const { client } = await projectWith(strict, [
      task('patient', {
        timeout: 600,
        environment: { DIR: dir },
        steps: [{ code: 'touch "$DIR/started"\nwhile [ ! -e "$DIR/go" ]; do sleep 0.05; done' }],
      }),
      task('hanging', { environment: { DIR: dir }, steps: [{ label: 'Hang', code: STUBBORN }] }),
      pipeline('wait', [{ task: 'patient' }]),
      pipeline('hang', [{ task: 'hanging' }]),
      command('wait', ['wait']),
      command('hang', ['hang']),
    ]);
    const waiting = await execute(client, 'wait');
    await waitFor(async () => existsSync(join(dir, 'started')), Boolean);
    // Started after `patient`, `hanging` runs out of the default time before it does.
    const hanging = await execute(client, 'hang');
    expect((await finished(client, hanging)).status).toBe('failed');
    const [hangingTask] = await tasksOf(client, hanging);
    expect(hangingTask?.failure_message).toBe(
      `step 1 "Hang" timed out: the server's default task timeout of 1 s passed`,
    );
    const pids = readFileSync(join(dir, 'pids'), 'utf8').trim().split(' ').map(Number);
    for (const pid of pids) expect(await waitFor(() => isGone(pid), Boolean)).toBe(true);
    // `patient` has run longer than the default allows, and still runs until told to end.
    const [patient] = await tasksOf(client, waiting);
    expect(patient?.status).toBe('started');
    writeFileSync(join(dir, 'go'), '');
    expect((await finished(client, waiting)).status).toBe('successful');
  });
});

describe('installResources', () => {
  async function install(specs: unknown[]) {
    const admin = server.client();
    const { data: project } = await admin.POST('/projects', { body: { name: uniqueName('p') } });
    return admin.PUT('/projects/id/{id}/resources', {
      params: { path: { id: project?.id ?? '' } },
      body: { specs: specs as Schemas['ResourceSpec'][] },
    });
  }
  const timed = (taskTimeout: unknown, stepTimeout: unknown) =>
    task('t', { timeout: taskTimeout, steps: [{ command: 'true', timeout: stepTimeout }] });

  it('takes timeouts of 1 to 604800 seconds', async () => {
    for (const seconds of [1, 604800]) {
      expect((await install([timed(seconds, seconds)])).response.status).toBe(204);
    }
  });

  it.each([
    [0, 'must be at least 1'],
    [604801, 'must be at most 604800'],
    [1.5, 'must be an integer'],
    ['60', 'must be an integer'],
  ])('refuses a timeout of %j in a task and in a step, naming both', async (seconds, reason) => {
    const error = (await install([timed(seconds, seconds)]).catch((e: unknown) => e)) as ApiError;
    expect(error).toMatchObject({ status: 400, code: 'invalid_request_body' });
    expect((error.data as { jsv_errors: unknown[] }).jsv_errors).toEqual([
      { pointer: '/specs/0/data/timeout', reason },
      { pointer: '/specs/0/data/steps/0/timeout', reason },
    ]);
  });
});
