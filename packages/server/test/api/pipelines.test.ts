import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Schemas } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import {
  command,
  execute,
  finished,
  parametersFor,
  pipeline,
  projectWith,
  stepsOf,
  task,
  tasksOf,
} from '../helpers/projects.js';
import { sharedTestServer, startTestServer } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';

// Pipelines running for real: ordering, instances, retries, failures, queuing, and what a
// task sees (environment, context file, its own API key).

const server = sharedTestServer({ scheduler: { maxRunningTasks: 6 } });

/**
 * Installs `specs` with a command `go` starting pipeline `main`, creates `identities` in the
 * project, executes it, returns the pipeline.
 */
async function run(
  specs: unknown[],
  parameters: Record<string, string | number | boolean> = {},
  identities: Schemas['IdentitySpec'][] = [],
) {
  const { project, client } = await projectWith(server, [
    ...specs,
    command('go', ['main'], parametersFor(parameters)),
  ]);
  for (const identity of identities) await client.POST('/identities', { body: identity });
  return { project, client, pipelineId: await execute(client, 'go', parameters) };
}

const sh = (code: string, label?: string) => ({ code, ...(label ? { label } : {}) });

describe('pipelines', () => {
  it('runs tasks in dependency order', async () => {
    const dir = server.tempDir();
    const step = (name: string) =>
      task(name, {
        environment: { DIR: dir },
        steps: [sh(`echo ${name} >> "$DIR/order"; cat "$DIR/order"`)],
      });
    const { client, pipelineId } = await run([
      step('a'),
      step('b'),
      step('c'),
      step('d'),
      pipeline('main', [
        { task: 'd', dependencies: ['b', 'c'] },
        { task: 'b', dependencies: ['a'] },
        { task: 'c', dependencies: ['a'] },
        { task: 'a' },
      ]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const tasks = await tasksOf(client, pipelineId);
    const d = tasks.find((t) => t.name === 'd');
    const output = (await stepsOf(client, d?.id ?? ''))[0]?.output.trim().split('\n') ?? [];
    expect(output[0]).toBe('a');
    expect(output.slice(1, 3).sort()).toEqual(['b', 'c']);
    expect(output[3]).toBe('d');
  });

  it('runs nb_instances instances in parallel, numbered from 1', async () => {
    const dir = server.tempDir();
    // Each instance waits (bounded) until all three have arrived: sequential runs would fail.
    const barrier = `touch "$DIR/$PIPEWRIGHT_INSTANCE_ID"
i=0
while [ "$(ls "$DIR" | wc -l)" -lt 3 ]; do i=$((i+1)); [ "$i" -gt 400 ] && exit 7; sleep 0.05; done
echo "instance $PIPEWRIGHT_INSTANCE_ID"`;
    const { client, pipelineId } = await run([
      task('work', { environment: { DIR: dir }, steps: [sh(barrier)] }),
      pipeline('main', [{ task: 'work', nb_instances: 3 }]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const tasks = await tasksOf(client, pipelineId);
    expect(tasks.map((t) => t.instance_id).sort()).toEqual([1, 2, 3]);
    for (const t of tasks) {
      expect((await stepsOf(client, t.id))[0]?.output).toBe(`instance ${t.instance_id}\n`);
    }
  });

  it('retries a failed task after retry_delay and keeps the output of every attempt', async () => {
    const dir = server.tempDir();
    const flaky = `n=$(cat "$DIR/count" 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > "$DIR/count"
echo "attempt $n"
[ "$n" -ge 3 ]`;
    const { client, pipelineId } = await run([
      task('flaky', { environment: { DIR: dir }, steps: [sh(flaky, 'Try')] }),
      pipeline('main', [{ task: 'flaky', nb_retries: 2, retry_delay: 1 }]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const [flakyTask] = await tasksOf(client, pipelineId);
    expect(flakyTask).toMatchObject({ status: 'successful', retry: 2 });
    const steps = await stepsOf(client, flakyTask?.id ?? '');
    expect(steps.map((s) => [s.attempt, s.status, s.exit_code, s.output])).toEqual([
      [0, 'failed', 1, 'attempt 1\n'],
      [1, 'failed', 1, 'attempt 2\n'],
      [2, 'successful', 0, 'attempt 3\n'],
    ]);
    // The delay is behaviour, not speed: the next attempt never starts before it.
    for (const [before, after] of [
      [steps[0], steps[1]],
      [steps[1], steps[2]],
    ]) {
      expect(Date.parse(after?.start_time ?? '') - Date.parse(before?.end_time ?? '')).toBeGreaterThanOrEqual(
        1000,
      );
    }
  });

  it('fails a task at its first failing step, naming it, and aborts the rest with on_failure abort', async () => {
    const { client, pipelineId } = await run([
      task('broken', { steps: [sh('echo one', 'First'), sh('exit 3', 'Second'), sh('echo never', 'Third')] }),
      task('slow', { steps: [sh('sleep 30')] }),
      task('after', { steps: [sh('echo after')] }),
      pipeline('main', [{ task: 'slow' }, { task: 'broken' }, { task: 'after', dependencies: ['broken'] }]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('failed');
    const tasks = Object.fromEntries((await tasksOf(client, pipelineId)).map((t) => [t.name, t]));
    expect(tasks.broken).toMatchObject({
      status: 'failed',
      failure_message: expect.stringMatching(/step 2 "Second".*3/),
    });
    expect(tasks.slow?.status).toBe('aborted');
    expect(tasks.after?.status).toBe('aborted');
    const steps = await stepsOf(client, tasks.broken?.id ?? '');
    expect(steps.map((s) => [s.index, s.status, s.exit_code])).toEqual([
      [0, 'successful', 0],
      [1, 'failed', 3],
    ]);
  });

  it('goes on after a failure with on_failure continue, and still ends failed', async () => {
    const { client, pipelineId } = await run([
      task('broken', { steps: [sh('exit 1')] }),
      task('after', { steps: [sh('echo after')] }),
      pipeline('main', [
        { task: 'broken', on_failure: 'continue' },
        { task: 'after', dependencies: ['broken'] },
      ]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('failed');
    const tasks = Object.fromEntries((await tasksOf(client, pipelineId)).map((t) => [t.name, t.status]));
    expect(tasks).toEqual({ broken: 'failed', after: 'successful' });
  });

  it('queues instances of a non-concurrent pipeline, oldest first', async () => {
    const { client } = await projectWith(server, [
      task('nap', { steps: [sh('sleep 0.3')] }),
      pipeline('main', [{ task: 'nap' }]),
      command('go', ['main']),
    ]);
    const first = await execute(client, 'go');
    const second = await execute(client, 'go');
    const [a, b] = [await finished(client, first), await finished(client, second)];
    expect([a.status, b.status]).toEqual(['successful', 'successful']);
    expect(Date.parse(b.start_time ?? '')).toBeGreaterThanOrEqual(Date.parse(a.end_time ?? ''));
  });

  it('runs instances of a concurrent pipeline at the same time', async () => {
    const dir = server.tempDir();
    const barrier = `touch "$DIR/$PIPEWRIGHT_PIPELINE_ID"
i=0
while [ "$(ls "$DIR" | wc -l)" -lt 2 ]; do i=$((i+1)); [ "$i" -gt 400 ] && exit 7; sleep 0.05; done`;
    const { client } = await projectWith(server, [
      task('meet', { environment: { DIR: dir }, steps: [sh(barrier)] }),
      pipeline('main', [{ task: 'meet' }], { concurrent: true }),
      command('go', ['main']),
    ]);
    const [first, second] = [await execute(client, 'go'), await execute(client, 'go')];
    expect((await finished(client, first)).status).toBe('successful');
    expect((await finished(client, second)).status).toBe('successful');
  });
});

describe('what a task sees', () => {
  it('gets a clean environment with its variables and parameters', async () => {
    const { project, client, pipelineId } = await run(
      [
        task('show', {
          environment: { COLOUR: 'blue', PIPEWRIGHT_PROJECT_ID: 'cannot override' },
          parameters: [{ name: 'size', type: 'number', default: 3, environment: 'SIZE' }],
          steps: [{ code: 'touch "$HOME/left" "$TMPDIR/left"' }, { command: 'env' }],
        }),
        pipeline('main', [{ task: 'show', parameters: { size: 7 } }]),
      ],
      { release: 'v2', urgent: true },
    );
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const [show] = await tasksOf(client, pipelineId);
    const output = (await stepsOf(client, show?.id ?? ''))[1]?.output ?? '';
    const env = Object.fromEntries(
      output
        .trim()
        .split('\n')
        .map((line) => [line.split('=')[0], line.slice(line.indexOf('=') + 1)]),
    );
    expect(env).toMatchObject({
      COLOUR: 'blue',
      SIZE: '7',
      RELEASE: 'v2',
      URGENT: 'true',
      PIPEWRIGHT_PROJECT_ID: project.id,
      PIPEWRIGHT_PROJECT_NAME: project.name,
      PIPEWRIGHT_PIPELINE_ID: pipelineId,
      PIPEWRIGHT_TASK_ID: show?.id,
      PIPEWRIGHT_INSTANCE_ID: '1',
      PIPEWRIGHT_API_URL: server.baseUrl,
      PIPEWRIGHT_API_KEY: expect.stringMatching(/^pwt_/),
      PIPEWRIGHT_CA_FILE: expect.any(String),
      NODE_EXTRA_CA_CERTS: expect.any(String),
      CURL_CA_BUNDLE: expect.any(String),
      SSL_CERT_FILE: expect.any(String),
      PIPEWRIGHT_CONTEXT_PATH: expect.any(String),
    });
    // Nothing of the server's own environment leaks in.
    // Its working directory and its TMPDIR are removed once it has ended.
    expect(env.HOME).toMatch(/^\//);
    expect(env.TMPDIR).toMatch(/^\//);
    expect(env.TMPDIR).not.toBe(env.HOME);
    await waitFor(
      async () => [env.HOME, env.TMPDIR].filter((dir) => existsSync(join(dir ?? '', 'left'))),
      (left) => left.length === 0,
    );
    // Nothing else: not a variable of the server's own environment (the shell adds PWD and the like).
    const shell = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);
    expect(
      Object.keys(env)
        .filter((name) => !shell.has(name))
        .sort(),
    ).toEqual(
      [
        'PATH',
        'HOME',
        'TMPDIR',
        'COLOUR',
        'SIZE',
        'RELEASE',
        'URGENT',
        'NODE_EXTRA_CA_CERTS',
        'SSL_CERT_FILE',
        'CURL_CA_BUNDLE',
        ...Object.keys(env).filter((name) => name.startsWith('PIPEWRIGHT_')),
      ].sort(),
    );
  });

  it('finds the event, its parameters and its identities in the context file', async () => {
    const { client, pipelineId } = await run(
      [
        task('context', {
          identities: ['deployer'],
          parameters: [{ name: 'target', type: 'string', default: 'staging' }],
          steps: [sh('cat "$PIPEWRIGHT_CONTEXT_PATH"')],
        }),
        pipeline('main', [{ task: 'context', nb_instances: 2 }]),
      ],
      { release: 'v9' },
      [{ name: 'deployer', kind: 'secret', data: { value: 'a secret of the deployer' } }],
    );
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const contexts = [];
    for (const t of await tasksOf(client, pipelineId)) {
      contexts.push(JSON.parse((await stepsOf(client, t.id))[0]?.output ?? '{}'));
    }
    const { data: pipelineData } = await client.GET('/pipelines/id/{id}', {
      params: { path: { id: pipelineId } },
    });
    for (const context of contexts) {
      expect(context).toMatchObject({
        event: {
          id: pipelineData?.event_id,
          connector: 'command',
          name: 'execution',
          data: { parameters: { release: 'v9' } },
        },
        task_parameters: { target: 'staging' },
        identities: ['deployer'],
      });
    }
    expect(contexts.map((c) => c.instance_id).sort()).toEqual([1, 2]);
  });

  it('uses its own key for its project only, and only while it runs', async () => {
    const call = (method: string, path: string, data?: string) =>
      `curl -sS -o /dev/null -w '%{http_code}\\n' -X ${method} -H "Authorization: Bearer $PIPEWRIGHT_API_KEY" -H "X-Service-Project-Id: $PIPEWRIGHT_PROJECT_ID" -H 'Content-Type: application/json' ${data ? `--data-binary '${data}'` : ''} "$PIPEWRIGHT_API_URL/v0${path}"`;
    const writer = [
      call('PUT', '/pipelines/id/$PIPEWRIGHT_PIPELINE_ID/scratchpad/key/version', '1.2.3'),
      // Hand the key to the test, to show it dies with the task.
      `curl -sS -X PUT -H "Authorization: Bearer $PIPEWRIGHT_API_KEY" -H "X-Service-Project-Id: $PIPEWRIGHT_PROJECT_ID" --data-binary "$PIPEWRIGHT_API_KEY" "$PIPEWRIGHT_API_URL/v0/pipelines/id/$PIPEWRIGHT_PIPELINE_ID/scratchpad/key/key"`,
      call('GET', '/projects'),
    ].join('\n');
    const reader = `v=$(curl -sSf -H "Authorization: Bearer $PIPEWRIGHT_API_KEY" -H "X-Service-Project-Id: $PIPEWRIGHT_PROJECT_ID" "$PIPEWRIGHT_API_URL/v0/pipelines/id/$PIPEWRIGHT_PIPELINE_ID/scratchpad/key/version")
echo "read $v"`;
    const { project, client, pipelineId } = await run([
      task('write', { steps: [sh(writer)] }),
      task('read', { steps: [sh(reader)] }),
      pipeline('main', [{ task: 'write' }, { task: 'read', dependencies: ['write'] }]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const tasks = Object.fromEntries((await tasksOf(client, pipelineId)).map((t) => [t.name, t]));
    expect((await stepsOf(client, tasks.write?.id ?? ''))[0]?.output).toBe('204\n403\n');
    expect((await stepsOf(client, tasks.read?.id ?? ''))[0]?.output).toBe('read 1.2.3\n');
    const { data: scratchpad } = await client.GET('/pipelines/id/{id}/scratchpad', {
      params: { path: { id: pipelineId } },
    });
    expect(scratchpad?.version).toBe('1.2.3');
    const deadKey = scratchpad?.key ?? '';
    await expect(server.client(deadKey, project.id).GET('/status')).rejects.toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    });
  });
});

describe('the scheduler', () => {
  it('never runs more tasks at once than its cap', async () => {
    const capped = await startTestServer({ scheduler: { maxRunningTasks: 2 } });
    try {
      const dir = server.tempDir();
      const probe = `mkdir "$DIR/running-$PIPEWRIGHT_INSTANCE_ID"
ls -d "$DIR"/running-* | wc -l >> "$DIR/seen"
sleep 0.2
rmdir "$DIR/running-$PIPEWRIGHT_INSTANCE_ID"`;
      const { client } = await projectWith(capped, [
        task('probe', { environment: { DIR: dir }, steps: [sh(probe)] }),
        pipeline('main', [{ task: 'probe', nb_instances: 5 }]),
        command('go', ['main']),
      ]);
      const pipelineId = await execute(client, 'go');
      expect((await finished(client, pipelineId)).status).toBe('successful');
      const seen = readFileSync(join(dir, 'seen'), 'utf8').trim().split('\n').map(Number);
      expect(seen).toHaveLength(5);
      expect(Math.max(...seen)).toBeLessThanOrEqual(2);
    } finally {
      await capped.close();
    }
  });

  it('runs a pipeline with the specs it was created with, whatever is installed later', async () => {
    const dir = server.tempDir();
    const gated = (text: string) =>
      task('say', {
        environment: { DIR: dir },
        steps: [
          sh(
            `i=0; while [ ! -e "$DIR/open" ]; do i=$((i+1)); [ "$i" -gt 400 ] && exit 7; sleep 0.05; done; echo ${text}`,
          ),
        ],
      });
    const specs = (text: string) => [
      gated(text),
      pipeline('main', [{ task: 'say' }]),
      command('go', ['main']),
    ];
    const { project, client } = await projectWith(server, specs('old'));
    const pipelineId = await execute(client, 'go');
    await server.client().PUT('/projects/id/{id}/resources', {
      params: { path: { id: project.id } },
      body: { specs: specs('new') as never },
    });
    writeFileSync(join(dir, 'open'), '');
    expect((await finished(client, pipelineId)).status).toBe('successful');
    const [say] = await tasksOf(client, pipelineId);
    expect((await stepsOf(client, say?.id ?? ''))[0]?.output).toBe('old\n');
    expect(say?.spec.data.steps[0]?.code).toContain('echo old');
  });
});

describe('step output', () => {
  it('can be read while the step still runs', async () => {
    const dir = server.tempDir();
    const { client, pipelineId } = await run([
      task('talk', {
        environment: { DIR: dir },
        steps: [
          sh(
            'echo early\ni=0; while [ ! -e "$DIR/open" ]; do i=$((i+1)); [ "$i" -gt 400 ] && exit 7; sleep 0.05; done\necho late',
          ),
        ],
      }),
      pipeline('main', [{ task: 'talk' }]),
    ]);
    const [talk] = await waitFor(
      () => tasksOf(client, pipelineId),
      (tasks) => tasks[0]?.status === 'started',
    );
    const running = await waitFor(
      () => stepsOf(client, talk?.id ?? ''),
      (steps) => steps[0]?.output === 'early\n',
    );
    // A pipeline starts with its first task, at that task's start time.
    const { data: started } = await client.GET('/pipelines/id/{id}', {
      params: { path: { id: pipelineId } },
    });
    expect(started).toMatchObject({ status: 'started', start_time: talk?.start_time });
    expect(running[0]).toMatchObject({ status: 'started' });
    expect(running[0]?.end_time).toBeUndefined();
    writeFileSync(join(dir, 'open'), '');
    await finished(client, pipelineId);
    expect((await stepsOf(client, talk?.id ?? ''))[0]).toMatchObject({
      status: 'successful',
      output: 'early\nlate\n',
    });
  });

  it('is cut at the limit, marked truncated, and interleaves stdout and stderr', async () => {
    const small = await startTestServer({ scheduler: { outputLimitBytes: 64 } });
    try {
      const { client } = await projectWith(small, [
        task('loud', { steps: [sh('echo out; echo err >&2; echo out2'), sh('yes line | head -n 1000')] }),
        pipeline('main', [{ task: 'loud' }]),
        command('go', ['main']),
      ]);
      const pipelineId = await execute(client, 'go');
      expect((await finished(client, pipelineId)).status).toBe('successful');
      const [loud] = await tasksOf(client, pipelineId);
      const [first, second] = await stepsOf(client, loud?.id ?? '');
      expect(first).toMatchObject({ output: 'out\nerr\nout2\n', output_truncated: false });
      expect(second?.output_truncated).toBe(true);
      expect(Buffer.byteLength(second?.output ?? '')).toBeLessThanOrEqual(64);
      expect(second?.output.startsWith('line\nline\n')).toBe(true);
    } finally {
      await small.close();
    }
  });
});

describe('isolation', () => {
  it("answers 404 for another project's pipelines, tasks and steps", async () => {
    const { client, pipelineId } = await run([
      task('t', { steps: [{ command: 'true' }] }),
      pipeline('main', [{ task: 't' }]),
    ]);
    await finished(client, pipelineId);
    const [only] = await tasksOf(client, pipelineId);
    const stranger = (await projectWith(server, [])).client;
    const inOtherOrg = (await projectWith(server, [], await server.newOrganization())).client;
    for (const other of [stranger, inOtherOrg]) {
      await expect(
        other.GET('/pipelines/id/{id}', { params: { path: { id: pipelineId } } }),
      ).rejects.toMatchObject({
        status: 404,
        code: 'unknown_pipeline',
      });
      await expect(
        other.GET('/tasks/id/{id}', { params: { path: { id: only?.id ?? '' } } }),
      ).rejects.toMatchObject({
        status: 404,
        code: 'unknown_task',
      });
      await expect(
        other.GET('/tasks/id/{id}/steps', { params: { path: { id: only?.id ?? '' } } }),
      ).rejects.toMatchObject({
        status: 404,
        code: 'unknown_task',
      });
      expect(
        (await other.GET('/tasks', { params: { query: { pipeline_id: pipelineId } } })).data?.elements,
      ).toEqual([]);
    }
  });
});
