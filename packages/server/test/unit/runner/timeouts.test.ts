import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunSink, StepResult } from '../../../src/runner/index.js';
import { runSteps } from '../../../src/runner/run-steps.js';
import { createSpawner } from '../../../src/runner/spawner.js';
import { formatSeconds, passedTimeout, TimeoutPassed, withTimeout } from '../../../src/runner/timeouts.js';
import type { RunRequest } from '../../../src/runner/types.js';

/** The spawner of this file's runs. */
const spawner = createSpawner();

describe('withTimeout', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborts once the seconds have passed, saying which timeout passed', () => {
    const timed = withTimeout(new AbortController().signal, 2, "the step's timeout");
    vi.advanceTimersByTime(1999);
    expect(timed.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(passedTimeout(timed.signal)).toEqual(new TimeoutPassed("the step's timeout of 2 s"));
  });

  it("follows its parent's abort with the parent's reason, which is no timeout", () => {
    const parent = new AbortController();
    const timed = withTimeout(parent.signal, 2, "the task's timeout");
    parent.abort(new Error('aborted by a user'));
    expect(timed.signal.reason).toEqual(new Error('aborted by a user'));
    vi.advanceTimersByTime(2000);
    expect(passedTimeout(timed.signal)).toBeUndefined();
  });

  it('passes on a timeout of its parent as its own reason', () => {
    const task = withTimeout(new AbortController().signal, 1, "the task's timeout");
    const step = withTimeout(task.signal, 5, "the step's timeout");
    vi.advanceTimersByTime(1000);
    expect(passedTimeout(step.signal)?.timeout).toBe("the task's timeout of 1 s");
  });

  it('never aborts once cleared, nor follows its parent', () => {
    const parent = new AbortController();
    const timed = withTimeout(parent.signal, 1, "the step's timeout");
    timed.clear();
    vi.advanceTimersByTime(5000);
    parent.abort();
    expect(timed.signal.aborted).toBe(false);
  });

  it('is its parent without seconds', () => {
    const parent = new AbortController().signal;
    expect(withTimeout(parent, undefined, "the step's timeout").signal).toBe(parent);
  });
});

describe('formatSeconds', () => {
  it.each([
    [1, '1 s'],
    [59, '59 s'],
    [61, '61 s'],
    [60, '1 min'],
    [5400, '90 min'],
    [3600, '1 h'],
    [21600, '6 h'],
    [604800, '168 h'],
  ])('writes %i seconds as %s', (seconds, text) => {
    expect(formatSeconds(seconds)).toBe(text);
  });
});

describe('runSteps with timeouts', () => {
  let workDir: string;
  let scriptDir: string;
  beforeEach(async () => {
    workDir = await realpath(await mkdtemp(join(tmpdir(), 'runner-timeouts-')));
    scriptDir = await realpath(await mkdtemp(join(tmpdir(), 'runner-timeouts-scripts-')));
  });
  afterEach(async () => {
    await rm(workDir, { recursive: true, force: true });
    await rm(scriptDir, { recursive: true, force: true });
  });

  /** Runs `sleep 60`-like steps, recording their results; `onOutput` acts while one runs. */
  function request(overrides: Partial<RunRequest>, onOutput?: () => void) {
    const results: StepResult[] = [];
    const sink: RunSink = {
      stepStarted: () => {},
      stepOutput: () => onOutput?.(),
      stepEnded: (_index, result) => results.push(result),
    };
    const base: RunRequest = {
      steps: [{ code: 'echo started; exec sleep 60' }],
      runtime: { name: 'local' },
      environment: { PATH: '/usr/bin:/bin' },
      workDir,
      scriptDir,
      signal: new AbortController().signal,
      graceMs: 5_000,
      outputLimitBytes: 1024,
      sink,
    };
    return { request: { ...base, ...overrides }, results };
  }

  it('times out a step past its timeout: stopped as an abort stops it, failing the run', async () => {
    const { request: timed, results } = request({ steps: [{ code: 'exec sleep 60', timeout: 1 }] });
    expect(await runSteps(spawner, timed)).toEqual({
      outcome: 'timed_out',
      stepIndex: 0,
      message: "step 1 timed out: the step's timeout of 1 s passed",
    });
    expect(results).toEqual([
      {
        outcome: 'timed_out',
        signal: 'SIGTERM',
        outputTruncated: false,
        message: "timed out: the step's timeout of 1 s passed",
      },
    ]);
  });

  it("names the server's default when the run's timeout is the server's", async () => {
    const { request: timed } = request({ timeout: { seconds: 1, source: 'server' } });
    expect(await runSteps(spawner, timed)).toMatchObject({
      outcome: 'timed_out',
      message: "step 1 timed out: the server's default task timeout of 1 s passed",
    });
  });

  it('leaves an abort an abort while timeouts are running', async () => {
    const controller = new AbortController();
    const { request: aborted, results } = request(
      {
        steps: [{ code: 'echo started; exec sleep 60', timeout: 600 }],
        timeout: { seconds: 600, source: 'task' },
        signal: controller.signal,
      },
      () => controller.abort(),
    );
    expect(await runSteps(spawner, aborted)).toEqual({ outcome: 'aborted' });
    expect(results).toEqual([{ outcome: 'aborted', signal: 'SIGTERM', outputTruncated: false }]);
  });
});
