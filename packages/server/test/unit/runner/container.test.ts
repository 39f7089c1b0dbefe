import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { containerCommand, envFile } from '../../../src/runner/container.js';
import {
  type ContainerEngine,
  type ContainerRuntime,
  findEngine,
  type RunSink,
  type Step,
  type StepResult,
} from '../../../src/runner/index.js';
import { runSteps } from '../../../src/runner/run-steps.js';
import { createSpawner } from '../../../src/runner/spawner.js';
import { waitFor } from '../../helpers/wait.js';

/** The spawner of this file's runs. */
const spawner = createSpawner();

const NO_ENGINE =
  'the container runtime needs podman or docker, and the server has neither (--container-engine)';

const runtime: ContainerRuntime = { name: 'container', image: 'alpine:3.20', pull: 'missing', network: true };
const labels = { 'io.pipewright.instance': 'i1', 'io.pipewright.task': 't1', 'io.pipewright.attempt': '2' };

describe('containerCommand', () => {
  const request = {
    runtime,
    files: {
      workDir: '/srv/work/1/work',
      tmpDir: '/srv/work/1/tmp',
      contextPath: '/srv/work/1/context.json',
      caFile: '/srv/work/ca.pem',
    },
    scriptDir: '/srv/work/1',
    name: 'pipewright-t1-2-1-abcd',
    labels,
  };
  /** The arguments every step gets, for `request`: before the options that vary, and after. */
  const head = [
    'run',
    '--rm',
    '-i',
    '--init',
    '--name',
    'pipewright-t1-2-1-abcd',
    '--label',
    'io.pipewright.instance=i1',
    '--label',
    'io.pipewright.task=t1',
    '--label',
    'io.pipewright.attempt=2',
    '--stop-timeout',
    '0',
  ];
  const mounts = [
    '-v',
    '/srv/work/1/work:/pipewright/work',
    '-v',
    '/srv/work/1/tmp:/pipewright/tmp',
    '-v',
    '/srv/work/1/context.json:/pipewright/context.json:ro',
    '-v',
    '/srv/work/ca.pem:/pipewright/ca.pem:ro',
  ];
  const envFileOf = (index: number) => [
    '-w',
    '/pipewright/work',
    '--env-file',
    `/srv/work/1/step-${index + 1}.env`,
  ];

  it.each<{ name: string; step: Step; index: number; scriptMount: string[]; argv: string[] }>([
    {
      name: 'a command, its arguments untouched',
      step: { command: 'echo', arguments: ['a b', '$(x)', '--rm'] },
      index: 0,
      scriptMount: [],
      argv: ['echo', 'a b', '$(x)', '--rm'],
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
      step: { code: '#!/usr/bin/env python3\nprint(1)', arguments: ['x'] },
      index: 2,
      scriptMount: ['-v', '/srv/work/1/step-3.sh:/pipewright/step-3.sh:ro'],
      argv: ['/pipewright/step-3.sh', 'x'],
    },
  ])(
    'runs $name in a new container, labelled, on the host network, its files mounted',
    ({ step, index, scriptMount, argv }) => {
      expect(containerCommand(request, step, index)).toEqual([
        ...head,
        '--pull',
        'missing',
        '--network',
        'host',
        ...mounts,
        ...scriptMount,
        ...envFileOf(index),
        '--',
        'alpine:3.20',
        ...argv,
      ]);
    },
  );

  it('passes the pull policy, the limits, no network and the task user, as both engines read them', () => {
    const limited: ContainerRuntime = {
      ...runtime,
      pull: 'never',
      memoryMib: 512,
      cpus: 1.5,
      network: false,
    };
    const user = { uid: 2_000_000_007, gid: 2_000_000_007 };
    const { caFile: _none, ...files } = request.files;
    expect(containerCommand({ ...request, runtime: limited, files, user }, { command: 'make' }, 0)).toEqual([
      ...head,
      '--pull',
      'never',
      '--network',
      'none',
      '--memory',
      '512m',
      '--cpus',
      '1.5',
      '--user',
      '2000000007:2000000007',
      ...mounts.slice(0, 6),
      ...envFileOf(0),
      '--',
      'alpine:3.20',
      'make',
    ]);
  });
});

describe('envFile', () => {
  it('writes one variable a line, values as they are', () => {
    expect(envFile({ A: 'x y', B: '', C: 'a=b "q" $HOME #' })).toEqual({
      text: 'A=x y\nB=\nC=a=b "q" $HOME #\n',
    });
  });

  it.each([
    ['a line feed', 'a\nb'],
    ['a carriage return', 'a\r'],
  ])('refuses a value with %s, naming its variable', (_name, value) => {
    expect(envFile({ OK: 'x', NOTE: value })).toEqual({
      problem: 'the container runtime cannot pass NOTE: its value holds a line break',
    });
  });

  it('refuses a line the engines cannot read (64 KiB)', () => {
    expect(envFile({ BIG: 'x'.repeat(63_996) })).toHaveProperty('text');
    expect(envFile({ BIG: 'x'.repeat(63_997) })).toEqual({
      problem: 'the container runtime cannot pass BIG: its value is over 64000 bytes',
    });
  });
});

describe('findEngine', () => {
  let binDir: string;
  beforeEach(async () => {
    binDir = await realpath(await mkdtemp(join(tmpdir(), 'runner-engines-')));
  });
  afterEach(async () => {
    await rm(binDir, { recursive: true, force: true });
  });
  const install = (name: string) => writeFile(join(binDir, name), '#!/bin/sh\n', { mode: 0o755 });

  it('prefers podman, which needs no daemon, and takes docker otherwise', async () => {
    expect(findEngine(binDir)).toBeUndefined();
    await install('docker');
    expect(findEngine(binDir)).toEqual({ name: 'docker', path: join(binDir, 'docker') });
    await install('podman');
    expect(findEngine(binDir)).toEqual({ name: 'podman', path: join(binDir, 'podman') });
  });

  it('finds the engine named, or none', async () => {
    await install('podman');
    expect(findEngine(binDir, 'docker')).toBeUndefined();
    await install('docker');
    expect(findEngine(binDir, 'docker')).toEqual({ name: 'docker', path: join(binDir, 'docker') });
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

  function run(
    steps: Step[],
    environment: Record<string, string>,
    engine: ContainerEngine | undefined,
    options: { image?: string; signal?: AbortSignal } = {},
  ) {
    const output: string[] = [];
    const results: StepResult[] = [];
    const sink: RunSink = {
      stepStarted: () => undefined,
      stepOutput: (index, text) => {
        output[index] = (output[index] ?? '') + text;
      },
      stepEnded: (_index, result) => results.push(result),
    };
    const outcome = runSteps(spawner, {
      steps,
      runtime: { ...runtime, image: options.image ?? runtime.image },
      container: {
        engine,
        labels,
        files: { tmpDir: workDir, contextPath: join(workDir, 'context.json') },
      },
      environment,
      workDir,
      scriptDir,
      signal: options.signal ?? new AbortController().signal,
      graceMs: 200,
      outputLimitBytes: 1024 * 1024,
      sink,
    });
    return { outcome, output, results };
  }

  /**
   * A stand-in engine: `run` shows its user, a variable of its own environment and of the step's,
   * the env file and the script, then runs the rest of its script (`runs`); `rm` is logged.
   */
  async function fakeEngine(runs = 'exit 0'): Promise<ContainerEngine> {
    const path = join(binDir, 'podman');
    const script = [
      '#!/bin/sh',
      `if [ "$1" = rm ]; then echo "$@" >> '${binDir}/removed'; exit 0; fi`,
      'while [ "$1" != --env-file ]; do shift; done',
      'echo "engine as $(id -u), ENGINE_ONLY=$ENGINE_ONLY SECRET=$SECRET"',
      'echo "env file:"; cat "$2"',
      `[ -x '${scriptDir}/step-1.sh' ] && echo "script is there"`,
      runs,
    ].join('\n');
    await writeFile(path, script);
    await chmod(path, 0o755);
    return { name: 'podman', path, environment: { PATH: '/usr/bin:/bin', ENGINE_ONLY: 'yes' } };
  }

  it('fails the first step when the server has no engine', async () => {
    const { outcome, results } = run([{ command: 'true' }, { command: 'true' }], {}, undefined);
    expect(await outcome).toEqual({
      outcome: 'failed',
      stepIndex: 0,
      message: `step 1 could not start: ${NO_ENGINE}`,
    });
    expect(results).toEqual([{ outcome: 'not_started', outputTruncated: false, message: NO_ENGINE }]);
  });

  it("runs the engine as the server's user with its own environment, the step's variables in a file only the server reads", async () => {
    const engine = await fakeEngine();
    const { outcome, output } = run([{ code: 'echo hi' }], { SECRET: 'hidden value', PATH: '/opt' }, engine);
    expect(await outcome).toEqual({ outcome: 'succeeded' });
    expect(output[0]).toBe(
      [
        `engine as ${process.getuid?.()}, ENGINE_ONLY=yes SECRET=`,
        'env file:',
        'SECRET=hidden value',
        'PATH=/opt',
        'script is there',
        '',
      ].join('\n'),
    );
    // The file goes with its step, and so does its script.
    expect(existsSync(join(scriptDir, 'step-1.env'))).toBe(false);
    expect(existsSync(join(scriptDir, 'step-1.sh'))).toBe(false);
    // A container that ended by itself was removed by the engine (--rm).
    expect(existsSync(join(binDir, 'removed'))).toBe(false);
  });

  it('removes the container of an aborted step, whose engine client it had to kill', async () => {
    const engine = await fakeEngine("trap '' TERM; echo started; sleep 30");
    const controller = new AbortController();
    const { outcome, output } = run([{ command: 'true' }], {}, engine, { signal: controller.signal });
    await waitFor(
      async () => output[0] ?? '',
      (text) => text.includes('started'),
    );
    controller.abort();
    expect(await outcome).toEqual({ outcome: 'aborted' });
    const removed = await readFile(join(binDir, 'removed'), 'utf8');
    expect(removed).toMatch(/^rm --force pipewright-t1-2-1-[0-9a-f]{8}\n$/);
  });

  it('does not start a step whose variable holds a line break, naming it', async () => {
    const engine = await fakeEngine();
    const { outcome } = run([{ command: 'true' }], { NOTE: 'two\nlines' }, engine);
    expect(await outcome).toEqual({
      outcome: 'failed',
      stepIndex: 0,
      message: 'step 1 could not start: the container runtime cannot pass NOTE: its value holds a line break',
    });
  });

  it('refuses an image name the engine would read as an option', async () => {
    const engine = await fakeEngine();
    const { outcome, output } = run([{ command: 'true' }], {}, engine, { image: '--privileged' });
    expect(await outcome).toEqual({
      outcome: 'failed',
      stepIndex: 0,
      message: 'step 1 could not start: invalid image name: "--privileged"',
    });
    expect(output).toEqual([]);
  });
});
