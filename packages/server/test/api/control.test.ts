import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ApiClient, getScratchpadEntry, setScratchpadEntry } from '@pipewright/client';
import { describe, expect, it } from 'vitest';
import { finished, pipeline, projectWith, startMain, stepsOf, task, tasksOf } from '../helpers/projects.js';
import { rawRequest } from '../helpers/raw.js';
import { sharedTestServer } from '../helpers/test-server.js';
import { waitFor } from '../helpers/wait.js';

// Steering pipelines: abort, restart, restart from failure, their 409s and their races;
// and the scratchpad.

const server = sharedTestServer({ scheduler: { graceMs: 500 } });
const start = (specs: unknown[]) => startMain(server, specs);

const path = (id: string) => ({ params: { path: { id } } });
const abort = (client: ApiClient, id: string) => client.POST('/pipelines/id/{id}/abort', path(id));
const restart = (client: ApiClient, id: string) => client.POST('/pipelines/id/{id}/restart', path(id));
const restartFromFailure = (client: ApiClient, id: string) =>
  client.POST('/pipelines/id/{id}/restart_from_failure', path(id));

async function taskStatuses(client: ApiClient, pipelineId: string) {
  return Object.fromEntries((await tasksOf(client, pipelineId)).map((t) => [t.name, t.status]));
}

describe('abortPipeline', () => {
  it('aborts at once, then stops the processes (SIGKILL for those ignoring SIGTERM)', async () => {
    const marker = join(server.tempDir(), 'stubborn-started');
    const { client, pipelineId } = await start([
      task('stubborn', {
        environment: { MARK: marker },
        steps: [{ code: 'trap \'\' TERM\ntouch "$MARK"\nsleep 60' }],
      }),
      task('later', { steps: [{ command: 'true' }] }),
      pipeline('main', [{ task: 'stubborn' }, { task: 'later', dependencies: ['stubborn'] }]),
    ]);
    // Abort only once the step has set its trap.
    await waitFor(async () => existsSync(marker), Boolean);
    const { response } = await abort(client, pipelineId);
    expect(response.status).toBe(204);
    // The store says aborted at once, whatever the process takes to die.
    const { data: now } = await client.GET('/pipelines/id/{id}', path(pipelineId));
    expect(now?.status).toBe('aborted');
    expect(await taskStatuses(client, pipelineId)).toEqual({ stubborn: 'aborted', later: 'aborted' });
    const stubborn = (await tasksOf(client, pipelineId)).find((t) => t.name === 'stubborn');
    const steps = await waitFor(
      () => stepsOf(client, stubborn?.id ?? ''),
      (s) => s[0]?.status === 'aborted',
    );
    expect(steps[0]?.end_time).toBeDefined();
    await waitFor(
      async () => server.scheduler.runningCount,
      (n) => n === 0,
    );
  });

  it('answers pipeline_finished once the pipeline has ended', async () => {
    const { client, pipelineId } = await start([
      task('t', { steps: [{ command: 'true' }] }),
      pipeline('main', [{ task: 't' }]),
    ]);
    await finished(client, pipelineId);
    await expect(abort(client, pipelineId)).rejects.toMatchObject({ status: 409, code: 'pipeline_finished' });
  });

  it('answers unknown_pipeline for a pipeline of another project', async () => {
    const { pipelineId } = await start([
      task('t', { steps: [{ command: 'true' }] }),
      pipeline('main', [{ task: 't' }]),
    ]);
    const other = await projectWith(server, []);
    await expect(abort(other.client, pipelineId)).rejects.toMatchObject({
      status: 404,
      code: 'unknown_pipeline',
    });
  });

  it('leaves one consistent result when racing a task that finishes', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { client, pipelineId } = await start([
        task('quick', { steps: [{ command: 'true' }] }),
        pipeline('main', [{ task: 'quick' }]),
      ]);
      const result = await abort(client, pipelineId).then(
        () => 'aborted',
        (error: { code?: string }) => error.code,
      );
      const ended = await finished(client, pipelineId);
      const [quick] = await tasksOf(client, pipelineId);
      if (result === 'aborted') {
        expect([ended.status, quick?.status]).toEqual(['aborted', 'aborted']);
      } else {
        expect(result).toBe('pipeline_finished');
        expect([ended.status, quick?.status]).toEqual(['successful', 'successful']);
      }
    }
  });
});

describe('restartPipeline', () => {
  it('runs every task again from scratch and clears the scratchpad', async () => {
    const { client, pipelineId } = await start([
      task('a', { steps: [{ code: 'echo a' }] }),
      task('b', { steps: [{ code: 'echo b' }] }),
      pipeline('main', [{ task: 'a' }, { task: 'b', dependencies: ['a'] }]),
    ]);
    const first = await finished(client, pipelineId);
    await setScratchpadEntry(client, pipelineId, 'note', 'kept?');
    expect((await restart(client, pipelineId)).response.status).toBe(204);
    const second = await finished(client, pipelineId);
    expect(second.status).toBe('successful');
    expect(Date.parse(second.start_time ?? '')).toBeGreaterThanOrEqual(Date.parse(first.end_time ?? ''));
    for (const t of await tasksOf(client, pipelineId)) {
      expect(t).toMatchObject({ status: 'successful', run: 2, retry: 0 });
      // Its first run's steps are kept, before those of the second.
      expect((await stepsOf(client, t.id)).map((s) => [s.run, s.attempt])).toEqual([
        [1, 0],
        [2, 0],
      ]);
    }
    const { data: scratchpad } = await client.GET('/pipelines/id/{id}/scratchpad', path(pipelineId));
    expect(scratchpad).toEqual({});
  });

  it('answers pipeline_not_finished while the pipeline runs, and two racing restarts give one', async () => {
    const dir = server.tempDir();
    const gate = `i=0; while [ ! -e "$DIR/open" ]; do i=$((i+1)); [ "$i" -gt 400 ] && exit 7; sleep 0.05; done`;
    const { client, pipelineId } = await start([
      task('gated', { environment: { DIR: dir }, steps: [{ code: gate }] }),
      pipeline('main', [{ task: 'gated' }]),
    ]);
    await expect(restart(client, pipelineId)).rejects.toMatchObject({
      status: 409,
      code: 'pipeline_not_finished',
    });
    writeFileSync(join(dir, 'open'), '');
    await finished(client, pipelineId);
    rmSync(join(dir, 'open'));
    const results = await Promise.allSettled([restart(client, pipelineId), restart(client, pipelineId)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({
      reason: { status: 409, code: 'pipeline_not_finished' },
    });
    expect(await tasksOf(client, pipelineId)).toHaveLength(1);
    writeFileSync(join(dir, 'open'), '');
    expect((await finished(client, pipelineId)).status).toBe('successful');
  });
});

describe('restartPipelineFromFailure', () => {
  it('runs again the failed task and its dependents only, keeping the rest and the scratchpad', async () => {
    const dir = server.tempDir();
    const flaky = `echo run >> "$DIR/flaky-runs"; [ -e "$DIR/fixed" ]`;
    const { client, pipelineId } = await start([
      task('ok', { environment: { DIR: dir }, steps: [{ code: 'echo run >> "$DIR/ok-runs"' }] }),
      task('flaky', { environment: { DIR: dir }, steps: [{ code: flaky }] }),
      task('after', { steps: [{ code: 'echo after' }] }),
      task('side', { steps: [{ code: 'echo side' }] }),
      pipeline('main', [
        { task: 'ok' },
        { task: 'flaky', dependencies: ['ok'], on_failure: 'continue' },
        { task: 'after', dependencies: ['flaky'] },
        { task: 'side', dependencies: ['ok'] },
      ]),
    ]);
    expect((await finished(client, pipelineId)).status).toBe('failed');
    expect(await taskStatuses(client, pipelineId)).toEqual({
      ok: 'successful',
      flaky: 'failed',
      after: 'successful',
      side: 'successful',
    });
    writeFileSync(join(dir, 'fixed'), '');
    const okTask = (await tasksOf(client, pipelineId)).find((t) => t.name === 'ok');
    const okEnd = okTask?.end_time;
    await setScratchpadEntry(client, pipelineId, 'note', 'stays');
    expect((await restartFromFailure(client, pipelineId)).response.status).toBe(204);
    expect((await finished(client, pipelineId)).status).toBe('successful');
    expect(await taskStatuses(client, pipelineId)).toEqual({
      ok: 'successful',
      flaky: 'successful',
      after: 'successful',
      side: 'successful',
    });
    expect((await tasksOf(client, pipelineId)).find((t) => t.name === 'ok')?.end_time).toBe(okEnd);
    expect(await getScratchpadEntry(client, pipelineId, 'note')).toBe('stays');
  });

  it('answers pipeline_not_failed for a successful pipeline and pipeline_not_finished for a running one', async () => {
    const { client, pipelineId } = await start([
      task('t', { steps: [{ command: 'true' }] }),
      pipeline('main', [{ task: 't' }]),
    ]);
    await finished(client, pipelineId);
    await expect(restartFromFailure(client, pipelineId)).rejects.toMatchObject({
      status: 409,
      code: 'pipeline_not_failed',
    });
    const slow = await start([
      task('t', { steps: [{ code: 'sleep 30' }] }),
      pipeline('main', [{ task: 't' }]),
    ]);
    await expect(restartFromFailure(slow.client, slow.pipelineId)).rejects.toMatchObject({
      status: 409,
      code: 'pipeline_not_finished',
    });
    await abort(slow.client, slow.pipelineId);
    expect((await restartFromFailure(slow.client, slow.pipelineId)).response.status).toBe(204);
    await abort(slow.client, slow.pipelineId);
  });
});

describe('a restart while the aborted steps still end', () => {
  it('runs the tasks again once their last run has ended, which does not end the new run', async () => {
    // The step takes 0.3 s to end after SIGTERM (within the grace period), printing meanwhile, and
    // notes when it ends: the restart comes meanwhile.
    const ended = join(server.tempDir(), 'restart-race-ended');
    const { client, pipelineId } = await start([
      task('t', {
        environment: { ENDED: ended },
        steps: [
          {
            code: 'trap \'echo stopping; sleep 0.3; echo stopped; touch "$ENDED"; exit 3\' TERM; echo up; sleep 30 & wait',
          },
        ],
      }),
      pipeline('main', [{ task: 't' }]),
    ]);
    const [t] = await waitFor(
      () => tasksOf(client, pipelineId),
      (tasks) => tasks[0]?.status === 'started',
    );
    await waitFor(
      () => stepsOf(client, t?.id ?? ''),
      (steps) => steps[0]?.output === 'up\n',
    );
    await abort(client, pipelineId);
    expect((await restartFromFailure(client, pipelineId)).response.status).toBe(204);
    // The new run starts once the aborted one has ended, and is not ended by that end.
    await waitFor(
      async () => existsSync(ended),
      (exists) => exists,
    );
    const [before, again] = await waitFor(
      () => stepsOf(client, t?.id ?? ''),
      (steps) => steps[1]?.output === 'up\n' && steps[1]?.status === 'started',
    );
    // The aborted run keeps its step, aborted at the restart, with what it printed until then.
    expect(before).toMatchObject({ run: 1, status: 'aborted', output: expect.stringMatching(/^up\n/) });
    expect(before?.end_time).toBeDefined();
    expect(again).toMatchObject({ run: 2, attempt: 0 });
    expect(Date.parse(again?.start_time ?? '')).toBeGreaterThanOrEqual(Math.floor(statSync(ended).mtimeMs));
    // What the aborted run printed after the restart went nowhere: the new run's step is its own.
    expect(again?.output).toBe('up\n');
    const { data } = await client.GET('/pipelines/id/{id}', path(pipelineId));
    expect(data?.status).toBe('started');
    await abort(client, pipelineId);
  });
});

describe('scratchpad', () => {
  async function somePipeline() {
    return start([task('t', { steps: [{ command: 'true' }] }), pipeline('main', [{ task: 't' }])]);
  }

  it('stores raw text whatever its content type, and answers it as text/plain', async () => {
    const { project, client, pipelineId } = await somePipeline();
    const url = `/v0/pipelines/id/${pipelineId}/scratchpad/key/`;
    const headers = { authorization: `Bearer ${server.adminKey}`, 'x-service-project-id': project.id };
    for (const [key, contentType, value] of [
      ['json-labelled', 'application/json', 'not { json'],
      ['plain', 'text/plain', 'line 1\nline 2 é ✓'],
      ['none', '', ''],
    ] as const) {
      const put = await rawRequest(server.baseUrl, server.ca, {
        method: 'PUT',
        path: url + key,
        headers: contentType ? { ...headers, 'content-type': contentType } : headers,
        body: value,
      });
      expect(put.status).toBe(204);
      const get = await rawRequest(server.baseUrl, server.ca, { method: 'GET', path: url + key, headers });
      expect(get.status).toBe(200);
      expect(get.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(get.text).toBe(value);
    }
    const { data } = await client.GET('/pipelines/id/{id}/scratchpad', path(pipelineId));
    expect(data).toEqual({ 'json-labelled': 'not { json', plain: 'line 1\nline 2 é ✓', none: '' });
  });

  it('deletes entries one by one or all at once', async () => {
    const { client, pipelineId } = await somePipeline();
    await setScratchpadEntry(client, pipelineId, 'a', '1');
    await setScratchpadEntry(client, pipelineId, 'b', '2');
    const entry = { params: { path: { id: pipelineId, key: 'a' } } };
    expect((await client.DELETE('/pipelines/id/{id}/scratchpad/key/{key}', entry)).response.status).toBe(204);
    await expect(getScratchpadEntry(client, pipelineId, 'a')).rejects.toMatchObject({
      status: 404,
      code: 'unknown_scratchpad_entry',
    });
    await expect(client.DELETE('/pipelines/id/{id}/scratchpad/key/{key}', entry)).rejects.toMatchObject({
      status: 404,
    });
    expect((await client.DELETE('/pipelines/id/{id}/scratchpad', path(pipelineId))).response.status).toBe(
      204,
    );
    expect((await client.GET('/pipelines/id/{id}/scratchpad', path(pipelineId))).data).toEqual({});
  });

  it('enforces its limits with clear errors and keeps what was stored', async () => {
    const { project, client, pipelineId } = await somePipeline();
    const headers = { authorization: `Bearer ${server.adminKey}`, 'x-service-project-id': project.id };
    const put = (key: string, body: string | Buffer) =>
      rawRequest(server.baseUrl, server.ca, {
        method: 'PUT',
        path: `/v0/pipelines/id/${pipelineId}/scratchpad/key/${key}`,
        headers: { ...headers, 'content-type': 'text/plain' },
        body: body as string,
      });
    expect((await put('big', 'x'.repeat(65_536))).status).toBe(204);
    const tooBig = await put('big', 'y'.repeat(65_537));
    expect([tooBig.status, tooBig.json?.code]).toEqual([413, 'request_body_too_large']);
    expect(await getScratchpadEntry(client, pipelineId, 'big')).toBe('x'.repeat(65_536));
    const notUtf8 = await put('bytes', Buffer.from([0xff, 0xfe, 0x41]));
    expect([notUtf8.status, notUtf8.json?.code]).toEqual([400, 'invalid_request_body']);
    const longKey = await put('k'.repeat(257), 'v');
    expect([longKey.status, longKey.json?.code]).toEqual([400, 'invalid_route_variable']);
    for (let i = 1; i < 1000; i += 1) await setScratchpadEntry(client, pipelineId, `k${i}`, 'v');
    const full = await put('one-more', 'v');
    expect([full.status, full.json?.code]).toEqual([400, 'invalid_request_body']);
    expect((await put('k1', 'replaced')).status).toBe(204);
    expect(
      Object.keys((await client.GET('/pipelines/id/{id}/scratchpad', path(pipelineId))).data ?? {}),
    ).toHaveLength(1000);
  });
});
