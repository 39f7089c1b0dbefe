import { chmod, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunSink, Step, StepResult } from '../../../src/runner/index.js';
import { runSteps } from '../../../src/runner/run-steps.js';
import { createSpawner } from '../../../src/runner/spawner.js';
import type { RunRequest } from '../../../src/runner/types.js';

const SYSTEM_PATH = '/usr/bin:/bin';

/** The spawner of this file's runs. */
const spawner = createSpawner();

let workDir: string;
let scriptDir: string;
beforeEach(async () => {
  // realpath: tmpdir() may go through a symlink, and a process reports its real working directory.
  workDir = await realpath(await mkdtemp(join(tmpdir(), 'runner-test-')));
  scriptDir = await realpath(await mkdtemp(join(tmpdir(), 'runner-test-scripts-')));
});
afterEach(async () => {
  await rm(workDir, { recursive: true, force: true });
  await rm(scriptDir, { recursive: true, force: true });
});

type SinkEvent = { event: 'started'; index: number } | { event: 'ended'; index: number; result: StepResult };

/** A sink that records everything, with hooks to act while a step runs. */
function recordingSink(onOutput?: (index: number, outputSoFar: string) => void) {
  const events: SinkEvent[] = [];
  const outputs: string[] = [];
  const sink: RunSink = {
    stepStarted: (index) => events.push({ event: 'started', index }),
    stepOutput: (index, text) => {
      outputs[index] = (outputs[index] ?? '') + text;
      onOutput?.(index, outputs[index]);
    },
    stepEnded: (index, result) => events.push({ event: 'ended', index, result }),
  };
  const result = (index: number) =>
    events.find((e): e is Extract<SinkEvent, { event: 'ended' }> => e.event === 'ended' && e.index === index)
      ?.result;
  return { sink, events, output: (index: number) => outputs[index] ?? '', result };
}

function request(steps: Step[], sink: RunSink, overrides: Partial<RunRequest> = {}): RunRequest {
  return {
    steps,
    runtime: { name: 'local' },
    environment: { PATH: SYSTEM_PATH },
    workDir,
    scriptDir,
    signal: new AbortController().signal,
    graceMs: 5_000,
    outputLimitBytes: 1024 * 1024,
    sink,
    ...overrides,
  };
}

/** Whether a process is gone (a zombie left for an init that does not reap counts as gone). */
async function isGone(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Polls until the process is gone; a killed process is reaped asynchronously. Bounded. */
async function waitUntilGone(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (await isGone(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

describe('runSteps', () => {
  it('runs the steps in order and stops at the first that fails, naming it and its exit status', async () => {
    const recorder = recordingSink();
    const outcome = await runSteps(
      spawner,
      request(
        [
          { command: 'echo', arguments: ['one'] },
          { label: 'Build', code: 'echo two\nexit 3' },
          { command: 'echo', arguments: ['never'] },
        ],
        recorder.sink,
      ),
    );
    expect(outcome).toEqual({
      outcome: 'failed',
      stepIndex: 1,
      message: 'step 2 "Build" exited with status 3',
    });
    expect(recorder.events.map((e) => `${e.event} ${e.index}`)).toEqual([
      'started 0',
      'ended 0',
      'started 1',
      'ended 1',
    ]);
    expect(recorder.output(0)).toBe('one\n');
    expect(recorder.output(1)).toBe('two\n');
    expect(recorder.result(0)).toEqual({ outcome: 'succeeded', exitCode: 0, outputTruncated: false });
    expect(recorder.result(1)).toEqual({
      outcome: 'failed',
      exitCode: 3,
      outputTruncated: false,
      message: 'exited with status 3',
    });
  });

  it('succeeds when every step succeeds, and names an unlabelled step by its number', async () => {
    const ok = recordingSink();
    expect(await runSteps(spawner, request([{ command: 'true' }, { code: 'true' }], ok.sink))).toEqual({
      outcome: 'succeeded',
    });
    const failing = recordingSink();
    expect(
      await runSteps(spawner, request([{ command: 'true' }, { command: 'false' }], failing.sink)),
    ).toEqual({
      outcome: 'failed',
      stepIndex: 1,
      message: 'step 2 exited with status 1',
    });
  });

  it('passes arguments verbatim, without a shell', async () => {
    const recorder = recordingSink();
    const hostile = [
      '$(echo injected)',
      '`id`',
      '; echo no',
      '| cat',
      '"quoted" \'single\'',
      'two  spaces',
      '*',
      '$HOME',
    ];
    await runSteps(
      spawner,
      request([{ command: 'printf', arguments: ['%s\\n', ...hostile] }], recorder.sink),
    );
    expect(recorder.output(0)).toBe(hostile.map((argument) => `${argument}\n`).join(''));
  });

  it('runs code without a #! line under /bin/sh with set -eu', async () => {
    const recorder = recordingSink();
    const unset = await runSteps(
      spawner,
      request([{ code: 'echo before\necho "$NOT_SET"\necho after' }], recorder.sink),
    );
    expect(unset).toMatchObject({ outcome: 'failed', stepIndex: 0 });
    expect(recorder.output(0)).toMatch(/^before\n.*NOT_SET/);
    expect(recorder.output(0)).not.toContain('after');

    const failing = recordingSink();
    await runSteps(spawner, request([{ code: 'false\necho after' }], failing.sink));
    expect(failing.result(0)).toMatchObject({ outcome: 'failed', exitCode: 1 });
    expect(failing.output(0)).toBe('');
  });

  it('runs code with a #! line with its own interpreter', async () => {
    const recorder = recordingSink();
    const outcome = await runSteps(
      spawner,
      request(
        [{ code: "#!/usr/bin/env node\nconsole.log('node', typeof process.version);\nprocess.exit(4);" }],
        recorder.sink,
        { environment: { PATH: `${dirname(process.execPath)}:${SYSTEM_PATH}` } },
      ),
    );
    expect(recorder.output(0)).toBe('node string\n');
    expect(outcome).toEqual({ outcome: 'failed', stepIndex: 0, message: 'step 1 exited with status 4' });
  });

  it('writes code to a script file beside the working directory, gone once the step is over', async () => {
    const recorder = recordingSink();
    await runSteps(
      spawner,
      request(
        [
          { code: 'echo "$0"; ls -A; ls -A "$(dirname "$0")"' },
          { command: 'ls', arguments: ['-A', scriptDir] },
        ],
        recorder.sink,
      ),
    );
    expect(recorder.output(0)).toBe(`${join(scriptDir, 'step-1.sh')}\nstep-1.sh\n`);
    expect(recorder.output(1)).toBe('');
  });

  it('writes a script anew, whatever was left where it goes', async () => {
    const victim = join(workDir, 'victim');
    await writeFile(victim, 'untouched');
    await symlink(victim, join(scriptDir, 'step-1.sh'));
    const recorder = recordingSink();
    await runSteps(spawner, request([{ code: 'echo mine' }], recorder.sink));
    expect(recorder.output(0)).toBe('mine\n');
    expect(await readFile(victim, 'utf8')).toBe('untouched');
  });

  it('interleaves stdout and stderr in the order written', async () => {
    const recorder = recordingSink();
    await runSteps(
      spawner,
      request(
        [
          { code: 'echo out1; echo err1 >&2; echo out2; echo err2 >&2' },
          { command: 'sh', arguments: ['-c', 'echo out3; echo err3 >&2; echo out4'] },
        ],
        recorder.sink,
      ),
    );
    expect(recorder.output(0)).toBe('out1\nerr1\nout2\nerr2\n');
    expect(recorder.output(1)).toBe('out3\nerr3\nout4\n');
  });

  it('gives a process exactly the environment given', async () => {
    const withPath = recordingSink();
    await runSteps(
      spawner,
      request([{ command: 'env' }], withPath.sink, { environment: { PATH: SYSTEM_PATH, ONLY: 'me' } }),
    );
    expect(withPath.output(0).split('\n').filter(Boolean).sort()).toEqual(['ONLY=me', `PATH=${SYSTEM_PATH}`]);

    // Without PATH, commands are still found (in DEFAULT_SEARCH_PATH) and none is added.
    const withoutPath = recordingSink();
    await runSteps(
      spawner,
      request([{ command: 'env' }], withoutPath.sink, { environment: { SECRET: 'a b=c' } }),
    );
    expect(withoutPath.output(0)).toBe('SECRET=a b=c\n');
  });

  it('runs every step in the working directory', async () => {
    const recorder = recordingSink();
    await runSteps(
      spawner,
      request([{ command: 'pwd', arguments: ['-P'] }, { code: 'pwd -P' }], recorder.sink),
    );
    expect(recorder.output(0)).toBe(`${workDir}\n`);
    expect(recorder.output(1)).toBe(`${workDir}\n`);
  });

  it('reports output while the step still runs', async () => {
    const recorder = recordingSink((_index, outputSoFar) => {
      if (outputSoFar === 'waiting\n') void writeFile(join(workDir, 'go'), '');
    });
    // The step waits for a file that the test creates only once it has seen the step's first line.
    const code =
      'echo waiting\ni=0\nwhile [ ! -e go ]; do i=$((i+1)); [ $i -lt 400 ] || exit 9; sleep 0.05; done\necho went';
    expect(await runSteps(spawner, request([{ code }], recorder.sink))).toEqual({ outcome: 'succeeded' });
    expect(recorder.output(0)).toBe('waiting\nwent\n');
  });

  it('keeps at most the output limit, cut between characters, and still drains the rest', async () => {
    const recorder = recordingSink();
    const outcome = await runSteps(
      spawner,
      request(
        [
          // 9 bytes, then "é" (2 bytes) across the 10-byte limit, then 2 MB the process must be able to write.
          { code: "printf '123456789\\303\\251'; head -c 2000000 /dev/zero; echo done >&2" },
          { code: "printf '12345678\\303\\251'" },
        ],
        recorder.sink,
        { outputLimitBytes: 10 },
      ),
    );
    expect(outcome).toEqual({ outcome: 'succeeded' });
    expect(recorder.output(0)).toBe('123456789');
    expect(recorder.result(0)).toMatchObject({ outcome: 'succeeded', outputTruncated: true });
    expect(recorder.output(1)).toBe('12345678é');
    expect(recorder.result(1)).toMatchObject({ outcome: 'succeeded', outputTruncated: false });
  });

  it('reports a step killed by a signal it did not get from us', async () => {
    const recorder = recordingSink();
    const outcome = await runSteps(
      spawner,
      request([{ label: 'Crash', code: 'kill -USR1 $$' }], recorder.sink),
    );
    expect(outcome).toEqual({
      outcome: 'failed',
      stepIndex: 0,
      message: 'step 1 "Crash" was killed by signal SIGUSR1',
    });
    expect(recorder.result(0)).toEqual({
      outcome: 'killed',
      signal: 'SIGUSR1',
      outputTruncated: false,
      message: 'was killed by signal SIGUSR1',
    });
  });

  it('reports a command that cannot start as not started', async () => {
    await writeFile(join(workDir, 'not-executable'), 'echo hi');
    await chmod(join(workDir, 'not-executable'), 0o644);
    const cases: [Step, string][] = [
      [{ command: 'no-such-command-pipewright' }, 'command not found: no-such-command-pipewright'],
      [{ command: './missing' }, 'command not found: ./missing'],
      [{ command: './not-executable' }, 'permission denied: ./not-executable'],
      [
        { code: '#!/no/such/interpreter -x\necho hi' },
        'the #! line names no executable interpreter: "/no/such/interpreter"',
      ],
    ];
    for (const [step, message] of cases) {
      const recorder = recordingSink();
      const outcome = await runSteps(spawner, request([step, { command: 'true' }], recorder.sink));
      expect(outcome).toEqual({
        outcome: 'failed',
        stepIndex: 0,
        message: `step 1 could not start: ${message}`,
      });
      expect(recorder.events).toEqual([
        { event: 'started', index: 0 },
        { event: 'ended', index: 0, result: { outcome: 'not_started', outputTruncated: false, message } },
      ]);
    }
  });

  it('kills what a step left running once its process exits', async () => {
    const recorder = recordingSink();
    // The background sleep holds the output pipe: without the kill, the step would never end.
    const outcome = await runSteps(spawner, request([{ code: 'sleep 1000 &\necho $!' }], recorder.sink));
    expect(outcome).toEqual({ outcome: 'succeeded' });
    expect(await waitUntilGone(Number(recorder.output(0)))).toBe(true);
  });

  it('ends the step even when a process that left its group holds the output open', async () => {
    const recorder = recordingSink();
    // setsid takes the sleep out of the step's process group, beyond the reach of the group kill; the
    // step waits until it has.
    const code = [
      `setsid sh -c 'echo $$ > escaped.pid; exec sleep 1000' &`,
      'i=0; while [ ! -s escaped.pid ]; do i=$((i+1)); [ $i -lt 500 ] || exit 9; sleep 0.01; done',
    ].join('\n');
    try {
      expect(await runSteps(spawner, request([{ code }], recorder.sink))).toEqual({ outcome: 'succeeded' });
    } finally {
      const escaped = Number(await readFile(join(workDir, 'escaped.pid'), 'utf8').catch(() => ''));
      if (escaped > 0) process.kill(escaped, 'SIGKILL');
    }
  });
});

describe('runSteps aborted', () => {
  it('starts nothing when aborted before the run', async () => {
    const controller = new AbortController();
    controller.abort();
    const recorder = recordingSink();
    expect(
      await runSteps(spawner, request([{ command: 'true' }], recorder.sink, { signal: controller.signal })),
    ).toEqual({
      outcome: 'aborted',
    });
    expect(recorder.events).toEqual([]);
  });

  it('starts no later step once aborted between steps', async () => {
    const controller = new AbortController();
    const recorder = recordingSink();
    const sink: RunSink = {
      ...recorder.sink,
      stepEnded: (index, result, time) => {
        recorder.sink.stepEnded(index, result, time);
        controller.abort();
      },
    };
    const outcome = await runSteps(
      spawner,
      request([{ command: 'true' }, { command: 'true' }], sink, { signal: controller.signal }),
    );
    expect(outcome).toEqual({ outcome: 'aborted' });
    expect(recorder.events.map((e) => `${e.event} ${e.index}`)).toEqual(['started 0', 'ended 0']);
  });

  it('sends SIGTERM to the whole group, then SIGKILL after the grace period', async () => {
    const controller = new AbortController();
    const recorder = recordingSink((_index, outputSoFar) => {
      if (/grandchild \d+\n/.test(outputSoFar)) controller.abort();
    });
    // The step survives SIGTERM (saying so), and so does its grandchild, which it does not even wait for.
    const code = [
      '#!/bin/sh',
      "trap 'echo step got TERM' TERM",
      `sh -c 'trap "" TERM; echo "grandchild $$"; while :; do sleep 1; done' &`,
      'while :; do wait; done',
    ].join('\n');
    const outcome = await runSteps(
      spawner,
      request([{ code }, { command: 'true' }], recorder.sink, { signal: controller.signal, graceMs: 300 }),
    );
    expect(outcome).toEqual({ outcome: 'aborted' });
    expect(recorder.result(0)).toEqual({ outcome: 'aborted', signal: 'SIGKILL', outputTruncated: false });
    expect(recorder.output(0)).toContain('step got TERM\n');
    expect(recorder.events.map((e) => `${e.event} ${e.index}`)).toEqual(['started 0', 'ended 0']);
    const grandchild = Number(/grandchild (\d+)/.exec(recorder.output(0))?.[1]);
    expect(await waitUntilGone(grandchild)).toBe(true);
  });

  it('ends a step that stops on SIGTERM without waiting for the grace period', async () => {
    const controller = new AbortController();
    const recorder = recordingSink(() => controller.abort());
    const outcome = await runSteps(
      spawner, // A grace longer than the test's timeout: the test passing shows it was not waited for.
      request([{ command: 'sh', arguments: ['-c', 'echo started; exec sleep 1000'] }], recorder.sink, {
        signal: controller.signal,
        graceMs: 600_000,
      }),
    );
    expect(outcome).toEqual({ outcome: 'aborted' });
    expect(recorder.result(0)).toEqual({ outcome: 'aborted', signal: 'SIGTERM', outputTruncated: false });
  });
});

describe('runSteps with a failing sink', () => {
  it('kills the step and rejects with the sink error', async () => {
    const failure = new Error('disk full');
    const recorder = recordingSink(() => {
      throw failure;
    });
    const code = 'echo hello\nsleep 1000';
    await expect(runSteps(spawner, request([{ code }], recorder.sink))).rejects.toBe(failure);
  });
});
