import type { ApiClient, ApiError } from '@pipewright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UidRange } from '../../src/runner/index.js';
import { containersLabelled, podman, podmanProblem, TEST_IMAGE, testEngine } from '../helpers/podman.js';
import { finished, pipeline, startMain, stepsOf, task, tasksOf } from '../helpers/projects.js';
import { startTestServer, type TestServer, uniqueName } from '../helpers/test-server.js';
import { claimUidRange } from '../helpers/uid-ranges.js';
import { waitFor } from '../helpers/wait.js';

// The `container` runtime against a real engine: podman, with the image TEST_IMAGE made here
// from busybox (no registry is reachable). Skipped, saying why, only where podman cannot run.

const problem = podmanProblem();
if (problem) console.warn(`containers.test.ts is skipped: ${problem}`);

/**
 * Task users of these tests' servers, apart from those of every other test and of another
 * clone's suite running meanwhile; below 2^31, as podman takes no uid above. Claimed only where
 * the tests run (as root, with podman).
 */
const TASK_USERS: UidRange = problem
  ? { first: 2_100_000_000, last: 2_100_000_099 }
  : claimUidRange(2_100_000_000, 100).range;

const INSTANCE_LABEL = 'io.pipewright.instance';

/** A server whose container steps run with podman, labelled with `instance`. */
const containerServer = (instance: string, taskUsers?: UidRange) =>
  startTestServer({
    scheduler: { graceMs: 1000, taskUsers, container: { engine: testEngine(), instance } },
  });

/** A `container` task of TEST_IMAGE, with `parameters` of the runtime. */
const boxed = (name: string, data: Record<string, unknown>, parameters: Record<string, unknown> = {}) =>
  task(name, { runtime: { name: 'container', parameters: { image: TEST_IMAGE, ...parameters } }, ...data });

/** The task of a one-task pipeline, once its first step's output shows `text` (or it ended). */
async function onceWritten(client: ApiClient, pipelineId: string, text: string) {
  const found = await waitFor(
    async () => {
      const [only] = await tasksOf(client, pipelineId);
      const steps = only ? await stepsOf(client, only.id) : [];
      return { task: only, output: steps[0]?.output ?? '' };
    },
    (read) => read.output.includes(text) || read.task?.end_time !== undefined,
  );
  expect(found.output).toContain(text);
  if (!found.task) throw new Error('no task');
  return found.task;
}

const taskLabel = (taskId: string) => `io.pipewright.task=${taskId}`;

describe.skipIf(problem)('the container runtime', () => {
  let server: TestServer;
  let instance: string;
  beforeAll(async () => {
    instance = uniqueName('instance');
    server = await containerServer(instance, TASK_USERS);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('runs each step in a new container of its image, as the task user, with the contract of a local step', async () => {
    const show = [
      'echo "user $(id -u):$(id -g)"',
      'echo "pwd $(pwd) home $HOME"',
      'echo "path $PATH"',
      'echo kept > "$HOME/kept"',
      'echo scratch > "$TMPDIR/scratch" && echo "tmpdir $TMPDIR"',
      'echo "context $PIPEWRIGHT_CONTEXT_PATH $(grep -o \'"target":"[a-z]*"\' "$PIPEWRIGHT_CONTEXT_PATH")"',
      'echo "ca $SSL_CERT_FILE $NODE_EXTRA_CA_CERTS $CURL_CA_BUNDLE $(head -n 1 "$PIPEWRIGHT_CA_FILE")"',
      'echo "variables $GREETING $TARGET $PIPEWRIGHT_TASK_ID"',
      // The API, at 127.0.0.1 on the host's network, with the task's own key, its certificate
      // checked against the one mounted (curl reads CURL_CA_BUNDLE).
      'curl -sS -H "Authorization: Bearer $PIPEWRIGHT_API_KEY" -H "X-Service-Project-Id: $PIPEWRIGHT_PROJECT_ID" \\',
      '  "$PIPEWRIGHT_API_URL/v0/pipelines/id/$PIPEWRIGHT_PIPELINE_ID" | grep -o \'"status":"started"\'',
    ].join('\n');
    const { client, pipelineId } = await startMain(
      server,
      [
        boxed('boxed', {
          environment: { GREETING: 'hello from' },
          steps: [
            { label: 'Show', code: show },
            { label: 'Read', command: 'cat', arguments: ['kept'] },
            { label: 'Fail', code: 'echo failing; exit 3' },
            { label: 'Never', command: 'true' },
          ],
        }),
        pipeline('main', [{ task: 'boxed' }]),
      ],
      { target: 'web' },
    );
    expect((await finished(client, pipelineId)).status).toBe('failed');
    const [boxedTask] = await tasksOf(client, pipelineId);
    expect(boxedTask?.failure_message).toBe('step 3 "Fail" exited with status 3');
    const steps = await stepsOf(client, boxedTask?.id ?? '');
    expect(steps.map((s) => [s.status, s.exit_code])).toEqual([
      ['successful', 0],
      ['successful', 0],
      ['failed', 3],
    ]);
    const uid = TASK_USERS.first;
    const lines = (steps[0]?.output ?? '').split('\n');
    expect(lines[0]).toMatch(/^user (\d+):\1$/);
    const [, taskUid] = /^user (\d+):/.exec(lines[0] ?? '') ?? [];
    expect(Number(taskUid)).toBeGreaterThanOrEqual(uid);
    expect(Number(taskUid)).toBeLessThanOrEqual(TASK_USERS.last);
    expect(lines.slice(1)).toEqual([
      'pwd /pipewright/work home /pipewright/work',
      // The image's PATH (podman's default for an image without one), not the host's.
      'path /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      'tmpdir /pipewright/tmp',
      'context /pipewright/context.json "target":"web"',
      'ca /pipewright/ca.pem /pipewright/ca.pem /pipewright/ca.pem -----BEGIN CERTIFICATE-----',
      `variables hello from web ${boxedTask?.id}`,
      '"status":"started"',
      '',
    ]);
    // The working directory outlives a step's container: the next step's sees its files.
    expect(steps[1]?.output).toBe('kept\n');
    expect(steps[2]?.output).toBe('failing\n');
    // Every container of the task is gone.
    expect(containersLabelled(taskLabel(boxedTask?.id ?? ''))).toEqual([]);
  });

  it('stops the step of an aborted pipeline with SIGTERM, and removes its container and what it started', async () => {
    const code = [
      "trap 'echo got TERM; exit 0' TERM",
      'sleep 600 &', // a process the step leaves running: it goes with the container
      'echo started',
      'sleep 600 & wait $!',
    ].join('\n');
    const { client, pipelineId } = await startMain(server, [
      boxed('waits', { steps: [{ code }] }),
      pipeline('main', [{ task: 'waits' }]),
    ]);
    const waits = await onceWritten(client, pipelineId, 'started');
    expect(containersLabelled(taskLabel(waits.id))).toHaveLength(1);
    await client.POST('/pipelines/id/{id}/abort', { params: { path: { id: pipelineId } } });
    expect((await finished(client, pipelineId)).status).toBe('aborted');
    await waitFor(
      async () => server.scheduler.runningCount,
      (n) => n === 0,
    );
    expect((await stepsOf(client, waits.id))[0]?.output).toBe('started\ngot TERM\n');
    expect(containersLabelled(taskLabel(waits.id))).toEqual([]);
  });

  it('kills a step deaf to SIGTERM at its timeout, after the grace, and removes its container', async () => {
    // Without task users: their sweep at the task's end would kill the container's processes too.
    const plain = await containerServer(uniqueName('instance'));
    try {
      const code = ["trap '' TERM", 'echo started', 'sleep 600'].join('\n');
      const { client, pipelineId } = await startMain(plain, [
        boxed('deaf', { steps: [{ label: 'Hang', code, timeout: 1 }] }),
        pipeline('main', [{ task: 'deaf' }]),
      ]);
      expect((await finished(client, pipelineId)).status).toBe('failed');
      const [deaf] = await tasksOf(client, pipelineId);
      expect(deaf?.failure_message).toBe(`step 1 "Hang" timed out: the step's timeout of 1 s passed`);
      expect((await stepsOf(client, deaf?.id ?? ''))[0]?.output).toBe('started\n');
      await waitFor(
        async () => plain.scheduler.runningCount,
        (n) => n === 0,
      );
      // Gone once the run has ended: no wait.
      expect(containersLabelled(taskLabel(deaf?.id ?? ''))).toEqual([]);
    } finally {
      await plain.close();
    }
  });

  it('limits memory and CPUs, and turns the network off, as the runtime says', async () => {
    const code = [
      // cgroup v1 or v2, whichever the host has.
      'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max',
      'cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cut -d " " -f 1 /sys/fs/cgroup/cpu.max',
      // Interfaces: the loopback alone.
      "tail -n +3 /proc/net/dev | cut -d : -f 1 | tr -d ' '",
      'curl -s --max-time 5 -o /dev/null "$PIPEWRIGHT_API_URL/v0/status" || echo "no API"',
    ].join('\n');
    const { client, pipelineId } = await startMain(server, [
      boxed('limited', { steps: [{ code }] }, { memory: 64, cpus: 0.5, network: false }),
      pipeline('main', [{ task: 'limited' }]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const [limited] = await tasksOf(client, pipelineId);
    const output = (await stepsOf(client, limited?.id ?? ''))[0]?.output ?? '';
    // 64 MiB; half of a 100 ms period.
    expect(output).toBe(`${64 * 1024 * 1024}\n50000\nlo\nno API\n`);
  });

  it.each([
    { pull: 'never', image: 'localhost/pw-test-missing:latest', shows: 'image not known' },
    { pull: 'always', image: TEST_IMAGE, shows: 'Trying to pull localhost/pw-test:latest' },
  ])('pulls the image as the runtime says: $pull', async ({ pull, image, shows }) => {
    const { client, pipelineId } = await startMain(server, [
      boxed('pulled', { steps: [{ command: 'true' }] }, { pull, image }),
      pipeline('main', [{ task: 'pulled' }]),
    ]);
    // Nothing to pull here (no registry): both fail, as the engine's own error says.
    expect((await finished(client, pipelineId)).status).toBe('failed');
    const [pulled] = await tasksOf(client, pipelineId);
    const [step] = await stepsOf(client, pulled?.id ?? '');
    expect(step?.exit_code).toBe(125);
    expect(step?.output).toContain(shows);
  });

  it('refuses runtime parameters out of range, and container parameters on the local runtime', async () => {
    const admin = server.client();
    const { data: project } = await admin.POST('/projects', { body: { name: uniqueName('p') } });
    const install = (runtime: Record<string, unknown>) =>
      admin
        .PUT('/projects/id/{id}/resources', {
          params: { path: { id: project?.id ?? '' } },
          body: { specs: [task('t', { runtime, steps: [{ command: 'true' }] })] as never },
        })
        .then(
          () => undefined,
          (error: ApiError) => ({ status: error.status, code: error.code }),
        );
    for (const parameters of [{ memory: 5 }, { cpus: 0 }, { pull: 'sometimes' }, { network: 'off' }]) {
      expect(await install({ name: 'container', parameters: { image: TEST_IMAGE, ...parameters } })).toEqual({
        status: 400,
        code: 'invalid_request_body',
      });
    }
    expect(await install({ name: 'local', parameters: { network: false } })).toEqual({
      status: 400,
      code: 'invalid_request_body',
    });
  });
});

describe.skipIf(problem)('containers of a server that stops or crashed', () => {
  it('removes the containers of the steps it stops when it stops', async () => {
    const instance = uniqueName('instance');
    const stopping = await containerServer(instance);
    let stopped = false;
    try {
      const { client, pipelineId } = await startMain(stopping, [
        boxed('long', { steps: [{ code: "trap '' TERM; echo started; sleep 600" }] }),
        pipeline('main', [{ task: 'long' }]),
      ]);
      await onceWritten(client, pipelineId, 'started');
      expect(containersLabelled(`${INSTANCE_LABEL}=${instance}`)).toHaveLength(1);
      await stopping.close();
      stopped = true;
      // Gone once the stop has ended: no wait.
      expect(containersLabelled(`${INSTANCE_LABEL}=${instance}`)).toEqual([]);
    } finally {
      if (!stopped) await stopping.close();
    }
  });

  it("removes at start the containers its instance left, and never another server's", async () => {
    // What a crash leaves: the server and its spawner dead, the engine clients killed with them,
    // their containers still running, labelled with the server's instance.
    const instance = uniqueName('instance');
    const other = uniqueName('instance');
    const left = (label: string | undefined) =>
      podman(
        'run',
        '--detach',
        '--init',
        '--stop-timeout',
        '0',
        '--network',
        'none',
        ...(label ? ['--label', `${INSTANCE_LABEL}=${label}`] : []),
        TEST_IMAGE,
        'sleep',
        '600',
      ).trim();
    const ours = [left(instance), left(instance)];
    const others = [left(other), left(undefined)];
    try {
      const restarted = await containerServer(instance);
      try {
        await waitFor(
          async () => containersLabelled(`${INSTANCE_LABEL}=${instance}`),
          (names) => names.length === 0,
        );
      } finally {
        await restarted.close();
      }
      const running = podman('ps', '--all', '--quiet', '--no-trunc').split('\n');
      for (const id of ours) expect(running).not.toContain(id);
      for (const id of others) expect(running).toContain(id);
    } finally {
      // One at a time: podman 4.3 removes none of several when one is already gone.
      for (const id of [...ours, ...others]) podman('rm', '--force', id);
    }
  });
});
