import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  containerCommand,
  type RunSink,
  runSteps,
  type Step,
  type StepResult,
} from '../../src/runner/index.js';

const NO_ENGINE = 'the container runtime needs docker or podman, and neither is installed';

describe('containerCommand', () => {
  const request = {
    image: 'alpine:3.20',
    workDir: '/srv/work/1/work',
    scriptDir: '/srv/work/1',
    environment: { PATH: '/usr/bin:/bin', SECRET: 's3cr3t value', PIPEWRIGHT_TASK_ID: 't1' },
  };
  const expected = (engine: string, scriptMount: string[], argv: string[]) => [
    engine,
    'run',
    '--rm',
    '-i',
    '--init',
    '-v',
    '/srv/work/1/work:/pipewright/work',
    ...scriptMount,
    '-w',
    '/pipewright/work',
    '-e',
    'SECRET',
    '-e',
    'PIPEWRIGHT_TASK_ID',
    'alpine:3.20',
    ...argv,
  ];

  it.each<{ name: string; step: Step; index: number; scriptMount: string[]; argv: string[] }>([
    {
      name: 'a command, its arguments untouched',
      step: { command: 'echo', arguments: ['a b', '$(x)'] },
      index: 0,
      scriptMount: [],
      argv: ['echo', 'a b', '$(x)'],
    },
    {
      name: 'a command without arguments',
      step: { command: 'make' },
      index: 0,
      scriptMount: [],
      argv: ['make'],
    },
    {
      name: 'code under sh -eu, its script mounted read-only',
      step: { code: 'echo hi' },
      index: 1,
      scriptMount: ['-v', '/srv/work/1/step-2.sh:/pipewright/step-2.sh:ro'],
      argv: ['/bin/sh', '-eu', '/pipewright/step-2.sh'],
    },
    {
      name: 'code with its own #! line',
      step: { code: '#!/usr/bin/env python3\nprint(1)' },
      index: 2,
      scriptMount: ['-v', '/srv/work/1/step-3.sh:/pipewright/step-3.sh:ro'],
      argv: ['/pipewright/step-3.sh'],
    },
  ])('runs $name', ({ step, index, scriptMount, argv }) => {
    for (const engine of ['docker', 'podman'] as const) {
      expect(containerCommand(engine, request, step, index)).toEqual(expected(engine, scriptMount, argv));
    }
  });

  it('never puts a value of the environment on the command line', () => {
    const argv = containerCommand('docker', request, { command: 'env' }, 0);
    expect(argv.join(' ')).not.toContain('s3cr3t');
    // The host's PATH stays on the host: the image's own applies inside.
    expect(argv).not.toContain('PATH');
  });
});

describe('runSteps in a container', () => {
  let workDir: string;
  let scriptDir: string;
  let binDir: string;
  beforeEach(async () => {
    workDir = await realpath(await mkdtemp(join(tmpdir(), 'runner-container-test-')));
    scriptDir = await realpath(await mkdtemp(join(tmpdir(), 'runner-container-scripts-')));
    binDir = await realpath(await mkdtemp(join(tmpdir(), 'runner-container-bin-')));
  });
  afterEach(async () => {
    for (const dir of [workDir, scriptDir, binDir]) await rm(dir, { recursive: true, force: true });
  });

  function run(steps: Step[], environment: Record<string, string>, image = 'alpine:3.20') {
    const output: string[] = [];
    const results: StepResult[] = [];
    const sink: RunSink = {
      stepStarted: () => undefined,
      stepOutput: (index, text) => {
        output[index] = (output[index] ?? '') + text;
      },
      stepEnded: (_index, result) => results.push(result),
    };
    const outcome = runSteps({
      steps,
      runtime: { name: 'container', image },
      environment,
      workDir,
      scriptDir,
      signal: new AbortController().signal,
      graceMs: 1_000,
      outputLimitBytes: 1024 * 1024,
      sink,
    });
    return { outcome, output, results };
  }

  /** A stand-in engine that shows what it was given: its arguments, a variable, and the script file. */
  async function installFakeEngine(name: string) {
    const script = [
      '#!/bin/sh',
      `echo "${name}"`,
      'for argument in "$@"; do echo "argument $argument"; done',
      'echo "SECRET=$SECRET"',
      `[ -x '${scriptDir}/step-1.sh' ] && echo "script is there"`,
      'exit 0',
    ].join('\n');
    await writeFile(join(binDir, name), script, { mode: 0o755 });
  }

  it('fails the first step when neither docker nor podman is on the PATH', async () => {
    const { outcome, results } = run([{ command: 'true' }, { command: 'true' }], { PATH: binDir });
    expect(await outcome).toEqual({
      outcome: 'failed',
      stepIndex: 0,
      message: `step 1 could not start: ${NO_ENGINE}`,
    });
    expect(results).toEqual([{ outcome: 'not_started', outputTruncated: false, message: NO_ENGINE }]);
  });

  it.each(['docker', 'podman'])(
    'runs the step through %s found on the PATH, values in its environment',
    async (engine) => {
      await installFakeEngine(engine);
      const { outcome, output } = run([{ code: 'echo hi' }], { PATH: binDir, SECRET: 'hidden value' });
      expect(await outcome).toEqual({ outcome: 'succeeded' });
      const engineArguments = [
        'run',
        '--rm',
        '-i',
        '--init',
        '-v',
        `${workDir}:/pipewright/work`,
        '-v',
        `${scriptDir}/step-1.sh:/pipewright/step-1.sh:ro`,
        '-w',
        '/pipewright/work',
      ];
      const imageAndStep = ['-e', 'SECRET', 'alpine:3.20', '/bin/sh', '-eu', '/pipewright/step-1.sh'];
      expect(output[0]).toBe(
        [
          engine,
          ...[...engineArguments, ...imageAndStep].map((argument) => `argument ${argument}`),
          'SECRET=hidden value',
          'script is there',
          '',
        ].join('\n'),
      );
    },
  );

  it('prefers docker when both are installed', async () => {
    await installFakeEngine('docker');
    await installFakeEngine('podman');
    const { outcome, output } = run([{ command: 'true' }], { PATH: binDir });
    expect(await outcome).toEqual({ outcome: 'succeeded' });
    expect(output[0]?.split('\n')[0]).toBe('docker');
  });

  it('refuses an image name the engine would read as an option', async () => {
    await installFakeEngine('docker');
    const { outcome, output } = run([{ command: 'true' }], { PATH: binDir }, '--privileged');
    expect(await outcome).toEqual({
      outcome: 'failed',
      stepIndex: 0,
      message: 'step 1 could not start: invalid image name: "--privileged"',
    });
    expect(output).toEqual([]);
  });
});
