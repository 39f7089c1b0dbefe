import { type ApiError, getScratchpadEntry, setScratchpadEntry } from '@pipewright/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { command, pipeline, projectWith, resourceId, task } from '../helpers/projects.js';
import { rawRequest } from '../helpers/raw.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// The bounds of a scratchpad beyond those of one entry: 1 MiB of keys and values in all, so
// that reading the whole scratchpad stays one bounded response; and keys that are text a
// shell or a C program can name (no NUL, valid percent-encoded UTF-8).

const LIMIT = 1024 * 1024;
/** A value of 65536 bytes, the most one entry takes, in 32768 characters: bytes are counted. */
const FULL_VALUE = 'é'.repeat(32_768);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function somePipeline() {
  const { project, client } = await projectWith(server, [
    task('t', { steps: [{ command: 'true' }] }),
    pipeline('main', [{ task: 't' }]),
    command('go', ['main']),
  ]);
  const { data } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: await resourceId(client, 'command', 'go') } },
    body: {},
  });
  const pipelineId = data?.pipeline_ids[0] ?? '';
  const whole = async () =>
    (await client.GET('/pipelines/id/{id}/scratchpad', { params: { path: { id: pipelineId } } })).data ?? {};
  /** A request outside the client, for keys it would encode. */
  const raw = (method: string, encodedKey: string, body?: string) =>
    rawRequest(server.baseUrl, server.ca, {
      method,
      path: `/v0/pipelines/id/${pipelineId}/scratchpad/key/${encodedKey}`,
      headers: { authorization: `Bearer ${server.adminKey}`, 'x-service-project-id': project.id },
      ...(body === undefined ? {} : { body }),
    });
  return { client, pipelineId, whole, raw };
}

const bytesOf = (entries: Record<string, string>) =>
  Object.entries(entries).reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + Buffer.byteLength(v), 0);

async function refusal(promise: Promise<unknown>) {
  const error = (await promise.then(
    () => {
      throw new Error('the write was accepted');
    },
    (e: unknown) => e,
  )) as ApiError;
  expect(error).toMatchObject({ status: 400, code: 'invalid_request_body' });
  return (error.data as { jsv_errors: { pointer: string; reason: string }[] }).jsv_errors;
}

describe('setScratchpadEntry', () => {
  it('holds at most 1 MiB of keys and values, counted in UTF-8, and says so when full', async () => {
    const { client, pipelineId, whole } = await somePipeline();
    // 15 full entries under 3-byte keys: 983085 bytes, 65491 short of the limit.
    for (let i = 1; i <= 15; i += 1) {
      await setScratchpadEntry(client, pipelineId, `k${String(i).padStart(2, '0')}`, FULL_VALUE);
    }
    const held = 15 * (3 + 65_536);
    expect(await refusal(setScratchpadEntry(client, pipelineId, 'k16', FULL_VALUE))).toEqual([
      {
        pointer: '',
        reason: `the scratchpad holds ${held} bytes of keys and values; this entry would bring it to ${held + 3 + 65_536}, past its limit of ${LIMIT}`,
      },
    ]);
    // What fits exactly is taken; a byte more is not, even in a new one-byte key.
    await setScratchpadEntry(client, pipelineId, 'k16', 'a'.repeat(LIMIT - held - 3));
    await expect(setScratchpadEntry(client, pipelineId, 'x', '')).rejects.toMatchObject({
      status: 400,
      code: 'invalid_request_body',
    });
    // A replacement that grows is refused; one that shrinks makes room.
    await expect(
      setScratchpadEntry(client, pipelineId, 'k16', `${'a'.repeat(LIMIT - held - 3)}b`),
    ).rejects.toMatchObject({
      status: 400,
    });
    await setScratchpadEntry(client, pipelineId, 'k01', 'short');
    await setScratchpadEntry(client, pipelineId, 'x', '');

    const entries = await whole();
    expect(Object.keys(entries)).toHaveLength(17);
    expect(bytesOf(entries)).toBe(LIMIT - 65_536 + 'short'.length + 1);
    expect(await getScratchpadEntry(client, pipelineId, 'k16')).toBe('a'.repeat(LIMIT - held - 3));
  });

  it('lets a scratchpad filled past the limit before it existed shrink, never grow', async () => {
    const { client, pipelineId, whole } = await somePipeline();
    // Such a scratchpad can only be made below the API: straight into the store.
    for (let i = 0; i < 20; i += 1) {
      await server.store.scratchpads.set(pipelineId, `old${i}`, 'x'.repeat(65_536));
    }
    await setScratchpadEntry(client, pipelineId, 'old0', 'y'.repeat(65_536));
    await setScratchpadEntry(client, pipelineId, 'old1', 'smaller');
    await expect(setScratchpadEntry(client, pipelineId, 'new', 'v')).rejects.toMatchObject({ status: 400 });
    await expect(setScratchpadEntry(client, pipelineId, 'old1', 'y'.repeat(65_536))).rejects.toMatchObject({
      status: 400,
    });
    const entries = await whole();
    expect([entries.old0, entries.old1, entries.new]).toEqual(['y'.repeat(65_536), 'smaller', undefined]);
  });

  it('refuses a key with NUL, on every method, and stores nothing', async () => {
    const { client, pipelineId, whole, raw } = await somePipeline();
    for (const [method, body] of [['PUT', 'v'], ['GET'], ['DELETE']] as const) {
      const answer = await raw(method, 'a%00b', body);
      expect([
        answer.status,
        answer.json?.code,
        (answer.json?.data as { variable?: string })?.variable,
      ]).toEqual([400, 'invalid_route_variable', 'key']);
    }
    await expect(setScratchpadEntry(client, pipelineId, '\0', 'v')).rejects.toMatchObject({
      status: 400,
      code: 'invalid_route_variable',
    });
    expect(await whole()).toEqual({});
  });

  it('refuses a key that is not valid percent-encoded UTF-8, and takes one that is', async () => {
    const { pipelineId, client, whole, raw } = await somePipeline();
    for (const encoded of ['%ZZ', 'a%', '%FF', '%E2%9C', '%C0%80', '%ED%A0%80']) {
      const answer = await raw('PUT', encoded, 'v');
      expect([encoded, answer.status, answer.json?.code]).toEqual([encoded, 400, 'invalid_route_variable']);
    }
    expect((await raw('PUT', '%E2%9C%93', 'check')).status).toBe(204);
    expect(await getScratchpadEntry(client, pipelineId, '✓')).toBe('check');
    expect(await whole()).toEqual({ '✓': 'check' });
  });
});
