import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRunner, type Runner, type RunSink } from '../../../src/runner/index.js';

// The runner as the scheduler uses it, through its interface: the place of an attempt, its run,
// its release. Task users and containers have tests of their own (task-users.test.ts,
// api/containers.test.ts).

let root: string;
let runner: Runner;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'runner-attempts-test-')));
  runner = createRunner({
    workRoot: join(root, 'work'),
    maxRunningTasks: 2,
    graceMs: 1000,
    outputLimitBytes: 1024,
  });
  runner.start({ onReady: () => undefined, onReapFailed: () => undefined });
});
afterEach(async () => {
  await runner.stop();
  await rm(root, { recursive: true, force: true });
});

function outputSink() {
  let output = '';
  const sink: RunSink = {
    stepStarted: () => undefined,
    stepOutput: (_index, text) => {
      output += text;
    },
    stepEnded: () => undefined,
  };
  return { sink, output: () => output };
}

describe('createRunner', () => {
  it('prepares an attempt with its context, runs its steps there, and removes its directories once released', async () => {
    expect(runner.canPrepare()).toBe(true);
    const attempt = runner.prepareAttempt('{"event":1}');
    expect(attempt.user).toBeUndefined();
    expect(attempt.workDir.startsWith(join(root, 'work'))).toBe(true);
    expect(readFileSync(attempt.contextPath, 'utf8')).toBe('{"event":1}');

    const recorder = outputSink();
    const outcome = await runner.run(attempt, {
      taskId: 'task1',
      attempt: 0,
      steps: [{ code: 'pwd -P\ncat "$CONTEXT"' }],
      runtime: { name: 'local' },
      environment: { PATH: '/usr/bin:/bin', CONTEXT: attempt.contextPath },
      signal: new AbortController().signal,
      sink: recorder.sink,
    });
    expect(outcome).toEqual({ outcome: 'succeeded' });
    expect(recorder.output()).toBe(`${attempt.workDir}\n{"event":1}`);

    runner.releaseAttempt(attempt);
    await runner.stop();
    expect(existsSync(attempt.dir)).toBe(false);
  });

  it('cuts the output of a step at its limit', async () => {
    const attempt = runner.prepareAttempt('{}');
    const recorder = outputSink();
    await runner.run(attempt, {
      taskId: 'task2',
      attempt: 0,
      steps: [{ command: 'head', arguments: ['-c', '5000', '/dev/zero'] }],
      runtime: { name: 'local' },
      environment: { PATH: '/usr/bin:/bin' },
      signal: new AbortController().signal,
      sink: recorder.sink,
    });
    expect(recorder.output().length).toBe(1024);
    runner.releaseAttempt(attempt);
  });

  it('finds nothing a previous server left without task users and a container engine', async () => {
    expect(await runner.sweepTaskUsers()).toBe(true);
    expect(await runner.removeStaleContainers()).toBe(0);
  });
});
