import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunSink, Step, StepResult } from '../../../src/runner/index.js';
import { processIdentity } from '../../../src/runner/process-identity.js';
import { runSteps } from '../../../src/runner/run-steps.js';
import { createSpawner } from '../../../src/runner/spawner.js';
import type { RunRequest } from '../../../src/runner/types.js';
import {
  command,
  finished,
  pipeline,
  projectWith,
  resourceId,
  stepsOf,
  task,
  tasksOf,
} from '../../helpers/projects.js';
import { startTestServer } from '../../helpers/test-server.js';
import { waitFor } from '../../helpers/wait.js';

// The step processes are spawned and owned by the spawner process, a child of this one. What
// happens when it dies, and that it does not outlive what uses it.

/** The spawner of this file's runs. */
const spawner = createSpawner();

let workDir: string;
beforeEach(async () => {
  workDir = await realpath(await mkdtemp(join(tmpdir(), 'runner-spawner-test-')));
});
afterEach(async () => {
  await rm(workDir, { recursive: true, force: true });
});

/** The pids of this process's spawner process (one at most). */
function spawnerProcesses(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (parent === process.pid && commandLine.includes('pipewright-spawner')) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

function killSpawners(): number[] {
  const pids = spawnerProcesses();
  for (const pid of pids) process.kill(pid, 'SIGKILL');
  return pids;
}

/** Whether a process is gone (a zombie counts as gone). */
async function isGone(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

const noSpawnerLeft = () =>
  waitFor(
    async () => spawnerProcesses(),
    (pids) => pids.length === 0,
  );

function recordingSink(onOutput?: (outputSoFar: string) => void) {
  let output = '';
  const results: StepResult[] = [];
  const sink: RunSink = {
    stepStarted: () => undefined,
    stepOutput: (_index, text) => {
      output += text;
      onOutput?.(output);
    },
    stepEnded: (_index, result) => results.push(result),
  };
  return { sink, output: () => output, results };
}

function request(steps: Step[], sink: RunSink, overrides: Partial<RunRequest> = {}): RunRequest {
  return {
    steps,
    runtime: { name: 'local' },
    environment: { PATH: '/usr/bin:/bin' },
    workDir,
    scriptDir: workDir, // what a step could do to it does not matter here
    signal: new AbortController().signal,
    graceMs: 5_000,
    outputLimitBytes: 1024 * 1024,
    sink,
    ...overrides,
  };
}

describe('the spawner', () => {
  /** Runs `argv` in the working directory to its end, its output to `onOutput`. */
  const runToEnd = (argv: string[], outputLimitBytes: number, onOutput: (chunk: Buffer) => void) =>
    spawner.run({
      argv,
      environment: {},
      cwd: workDir,
      signal: new AbortController().signal,
      graceMs: 1000,
      outputLimitBytes,
      onOutput,
    });

  it('ends a running step as killed when its spawner dies, kills the step, and runs the next step anew', async () => {
    let killed: number[] = [];
    const recorder = recordingSink((output) => {
      if (killed.length === 0 && output.endsWith('\n')) killed = killSpawners();
    });
    const outcome = await runSteps(spawner, request([{ code: 'echo $$\nexec sleep 1000' }], recorder.sink));
    expect(killed.length).toBeGreaterThan(0);
    expect(outcome).toEqual({
      outcome: 'failed',
      stepIndex: 0,
      message: expect.stringMatching(
        /^step 1 was killed: the step spawner \(pid \d+\) was killed by signal SIGKILL$/,
      ),
    });
    expect(recorder.results[0]).toMatchObject({ outcome: 'killed', outputTruncated: false });
    const step = Number(recorder.output().trim());
    expect(await waitFor(() => isGone(step), Boolean)).toBe(true);

    const next = recordingSink();
    expect(await runSteps(spawner, request([{ command: 'echo', arguments: ['again'] }], next.sink))).toEqual({
      outcome: 'succeeded',
    });
    expect(next.output()).toBe('again\n');
  });

  it('stops once its last run ends when nothing holds it, and while held stays up until released', async () => {
    await runSteps(spawner, request([{ command: 'true' }], recordingSink().sink));
    expect(await noSpawnerLeft()).toEqual([]);

    const release = spawner.hold();
    expect(spawnerProcesses().length).toBeGreaterThan(0);
    await runSteps(spawner, request([{ command: 'true' }], recordingSink().sink));
    expect(spawnerProcesses().length).toBeGreaterThan(0);
    await release();
    expect(spawnerProcesses()).toEqual([]);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'runs steps of a root server with no new privileges: a set-user-id file gives them nothing',
    async () => {
      let output = '';
      const end = await runToEnd(['/bin/grep', '^NoNewPrivs:', '/proc/self/status'], 1000, (chunk) => {
        output += chunk.toString();
      });
      expect(end).toEqual({ kind: 'exited', exitCode: 0, aborted: false });
      expect(output.trim()).toBe('NoNewPrivs:\t1');
    },
  );

  it('sends back at most the output limit and a few bytes, and drains the rest', async () => {
    let received = 0;
    const end = await runToEnd(['/usr/bin/head', '-c', '5000000', '/dev/zero'], 10, (chunk) => {
      received += chunk.length;
    });
    expect(end).toEqual({ kind: 'exited', exitCode: 0, aborted: false });
    expect(received).toBe(14);
  });

  it('sends back output within the limit whole and in order, however slowly it is taken', async () => {
    const chunks: Buffer[] = [];
    const end = await runToEnd(['/usr/bin/seq', '1', '300000'], 10 * 1024 * 1024, (chunk) => {
      chunks.push(chunk);
      const until = Date.now() + 1; // a receiver slower than the sender: the channel backs up
      while (Date.now() < until) {
        // busy
      }
    });
    expect(end).toEqual({ kind: 'exited', exitCode: 0, aborted: false });
    const expected = `${Array.from({ length: 300000 }, (_, i) => i + 1).join('\n')}\n`;
    expect(Buffer.concat(chunks).toString()).toBe(expected);
  });

  it('tells who the process is: after a while when it prints nothing, else before its first output', async () => {
    const run = (argv: string[], onEvent: (event: string, abort: () => void) => void) => {
      const told: { pid: number; identity: string | undefined; now: string | undefined }[] = [];
      const controller = new AbortController();
      const ended = spawner.run({
        argv,
        environment: {},
        cwd: workDir,
        signal: controller.signal,
        graceMs: 1000,
        onOutput: () => onEvent('output', () => controller.abort()),
        onSpawn: (pid, identity) => {
          told.push({ pid, identity, now: processIdentity(pid) });
          onEvent('spawned', () => controller.abort());
        },
      });
      return { told, ended };
    };
    const quiet = run(['/bin/sleep', '1000'], (_event, abort) => abort());
    expect(await quiet.ended).toMatchObject({ kind: 'signaled', aborted: true });
    expect(quiet.told).toHaveLength(1);
    expect(quiet.told[0]?.identity).toMatch(/^[0-9a-f-]+\/\d+$/);
    expect(quiet.told[0]?.identity).toBe(quiet.told[0]?.now);

    const events: string[] = [];
    const loud = run(['/bin/sh', '-c', 'echo hi; exec sleep 1000'], (event, abort) => {
      events.push(event);
      if (event === 'output') abort();
    });
    await loud.ended;
    expect(events).toEqual(['spawned', 'output']);
  });

  it('kills the process and rejects when the pid cannot be taken', async () => {
    const failure = new Error('disk full');
    let output = '';
    const ended = spawner.run({
      argv: ['/bin/sh', '-c', 'echo $$; exec sleep 1000'],
      environment: {},
      cwd: workDir,
      signal: new AbortController().signal,
      graceMs: 1000,
      onOutput: (chunk) => {
        output += chunk.toString();
      },
      onSpawn: () => {
        throw failure;
      },
    });
    await expect(ended).rejects.toBe(failure);
    const pid = Number(output.trim());
    if (pid > 0) expect(await waitFor(() => isGone(pid), Boolean)).toBe(true);
  });

  it('reports a process that cannot be spawned as not started, with why', async () => {
    const recorder = recordingSink();
    const outcome = await runSteps(
      spawner,
      request([{ command: 'true' }], recorder.sink, { environment: { PATH: '/usr/bin:/bin', BAD: 'a\0b' } }),
    );
    expect(outcome).toEqual({
      outcome: 'failed',
      stepIndex: 0,
      message: expect.stringMatching(/^step 1 could not start: .*null bytes/),
    });
    expect(recorder.results[0]).toMatchObject({ outcome: 'not_started' });
  });

  it('runs many processes side by side, each with its own output, environment, directory and end', async () => {
    // More runs at once than the spawner's table starts with (16): it grows while they run.
    const count = 40;
    const ends = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        let output = '';
        const end = await spawner.run({
          argv: ['/bin/sh', '-c', 'sleep 0.2; echo "$N $(pwd)"; exit $((N % 7))'],
          environment: { N: String(i) },
          cwd: i % 2 === 0 ? workDir : '/',
          signal: new AbortController().signal,
          graceMs: 1000,
          onOutput: (chunk) => {
            output += chunk.toString();
          },
        });
        return { end, output };
      }),
    );
    ends.forEach(({ end, output }, i) => {
      expect(end).toEqual({ kind: 'exited', exitCode: i % 7, aborted: false });
      expect(output).toBe(`${i} ${i % 2 === 0 ? workDir : '/'}\n`);
    });
  });

  it("gives a step only its stdin, stdout and stderr, none of the spawner's own descriptors", async () => {
    // Another run holds its output's socket meanwhile: that must not reach this one either.
    const controller = new AbortController();
    const other = spawner.run({
      argv: ['/bin/sleep', '1000'],
      environment: {},
      cwd: workDir,
      signal: controller.signal,
      graceMs: 1000,
      onOutput: () => undefined,
    });
    let output = '';
    const end = await runToEnd(['/bin/ls', '-1', '/proc/self/fd'], 1000, (chunk) => {
      output += chunk.toString();
    });
    controller.abort();
    await other;
    expect(end).toEqual({ kind: 'exited', exitCode: 0, aborted: false });
    // 3 is the directory ls itself reads.
    expect(output.trim().split('\n')).toEqual(['0', '1', '2', '3']);
  });

  it('reports a working directory that cannot be entered as not started, as Node words it', async () => {
    const end = await spawner.run({
      argv: ['/usr/bin/true'],
      environment: {},
      cwd: join(workDir, 'missing'),
      signal: new AbortController().signal,
      graceMs: 1000,
      onOutput: () => undefined,
    });
    expect(end).toEqual({ kind: 'not_started', message: 'spawn /usr/bin/true ENOENT' });
  });

  it('runs an executable file without a #! line with /bin/sh, as execvp does', async () => {
    await writeFile(join(workDir, 'script'), 'echo "script got $1"\n');
    await chmod(join(workDir, 'script'), 0o755);
    const recorder = recordingSink();
    const outcome = await runSteps(
      spawner,
      request([{ command: './script', arguments: ['$HOME; two words'] }], recorder.sink),
    );
    expect(outcome).toEqual({ outcome: 'succeeded' });
    expect(recorder.output()).toBe('script got $HOME; two words\n');
  });
});

describe('the scheduler and its spawner', () => {
  it('fails the task whose spawner died with a clear message, runs later tasks, and leaves no spawner once stopped', async () => {
    const server = await startTestServer();
    try {
      const { client } = await projectWith(server, [
        task('slow', { steps: [{ code: 'echo started\nexec sleep 1000' }] }),
        task('quick', { steps: [{ command: 'echo', arguments: ['done'] }] }),
        pipeline('hit', [{ task: 'slow' }]),
        pipeline('after', [{ task: 'quick' }]),
        command('hit', ['hit']),
        command('after', ['after']),
      ]);
      const execute = async (name: string) => {
        const { data } = await client.POST('/commands/id/{id}/execute', {
          params: { path: { id: await resourceId(client, 'command', name) } },
          body: {},
        });
        return data?.pipeline_ids[0] ?? '';
      };
      const hit = await execute('hit');
      const [slow] = await tasksOf(client, hit);
      // Killed once the step's process runs: its output shows it.
      await waitFor(
        async () => (await stepsOf(client, slow?.id ?? ''))[0]?.output,
        (output) => output === 'started\n',
      );
      expect(killSpawners().length).toBeGreaterThan(0);

      expect((await finished(client, hit)).status).toBe('failed');
      expect((await tasksOf(client, hit))[0]).toMatchObject({
        status: 'failed',
        failure_message: expect.stringMatching(
          /^step 1 was killed: the step spawner \(pid \d+\) was killed by signal SIGKILL$/,
        ),
      });
      const after = await execute('after');
      expect((await finished(client, after)).status).toBe('successful');
    } finally {
      await server.close();
    }
    expect(spawnerProcesses()).toEqual([]);
  });
});
