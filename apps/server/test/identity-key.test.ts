import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ApiClient, createClient } from '@pipewright/client';
import { lastLine, runProgram, startProgram, tempDirs } from '@pipewright/testing';
import { describe, expect, it } from 'vitest';
import { eventually } from './program.js';

// The key that encrypts identities: made at the first start, kept out of the database, and the
// only one a data directory's identities open with.

const tempDirWithPrefix = tempDirs();
const tempDir = () => tempDirWithPrefix('pipewright-identity-key-');

const baseOf = (url: string) => url.replace(/\/v0$/, '');
const listen = ['--listen', '127.0.0.1:0'];

/** A project whose command `go` runs a task that succeeds only if identity `deploy` holds `value`. */
async function projectUsing(client: ApiClient, value: string): Promise<string> {
  const { data: project } = await client.POST('/projects', { body: { name: 'keyed' } });
  const hash = createHash('sha256').update(value).digest('hex');
  await client.PUT('/projects/id/{id}/resources', {
    params: { path: { id: project?.id ?? '' } },
    body: {
      specs: [
        {
          type: 'task',
          version: 1,
          name: 'check',
          data: {
            identities: ['deploy'],
            steps: [{ code: `printf %s "$DEPLOY_VALUE" | sha256sum | grep -q ${hash}` }],
          },
        },
        { type: 'pipeline', version: 1, name: 'main', data: { tasks: [{ task: 'check' }] } },
        { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['main'] } },
      ],
    },
  });
  return project?.id ?? '';
}

/** Runs command `go` of the project and waits (bounded) for its pipeline's end. */
async function runGo(client: ApiClient): Promise<string> {
  const { data: go } = await client.GET('/resources/type/{type}/name/{name}', {
    params: { path: { type: 'command', name: 'go' } },
  });
  const { data } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: go?.id ?? '' } },
    body: { parameters: {} },
  });
  const pipelineId = data?.pipeline_ids[0] ?? '';
  return eventually(async () => {
    const { data: pipeline } = await client.GET('/pipelines/id/{id}', {
      params: { path: { id: pipelineId } },
    });
    return pipeline && ['successful', 'failed', 'aborted'].includes(pipeline.status)
      ? pipeline.status
      : undefined;
  });
}

describe('the identity key', () => {
  it('is made at the first start, private, and is the only key the identities open with', async () => {
    const dir = tempDir();
    const value = randomBytes(16).toString('hex');
    const first = await startProgram([...listen, '--data-dir', dir]);
    let projectId: string;
    const apiKey = lastLine(first.stdout());
    const ca = readFileSync(join(dir, 'tls', 'cert.pem'), 'utf8');
    try {
      const client = createClient({ baseUrl: baseOf(first.url), apiKey, ca });
      projectId = await projectUsing(client, value);
      const scoped = createClient({ baseUrl: baseOf(first.url), apiKey, ca, projectId });
      await scoped.POST('/identities', { body: { name: 'deploy', kind: 'secret', data: { value } } });
    } finally {
      await first.stop();
    }
    const keyFile = join(dir, 'identity.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64')).toHaveLength(32);
    expect(readFileSync(join(dir, 'pipewright.db')).includes(Buffer.from(value))).toBe(false);

    // Another key: the server refuses to start, rather than fail every task with an identity.
    const otherKey = join(tempDir(), 'other.key');
    writeFileSync(otherKey, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    const wrong = await runProgram([...listen, '--data-dir', dir, '--identity-key-file', otherKey]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(
      `pipewright-server: the identity key ${otherKey} is not the key the identities of ${dir} were stored with`,
    );
    // A key others may read is no secret.
    chmodSync(otherKey, 0o644);
    const open = await runProgram([...listen, '--data-dir', tempDir(), '--identity-key-file', otherKey]);
    expect(open.code).toBe(1);
    expect(open.stderr).toContain(
      'may be read or changed by other users (mode 644): make it private with chmod 600',
    );
    // Its own key again, given as the operator would: the task gets the value.
    const again = await startProgram([...listen, '--data-dir', dir], {
      PIPEWRIGHT_IDENTITY_KEY_FILE: keyFile,
    });
    try {
      const client = createClient({ baseUrl: baseOf(again.url), apiKey, ca, projectId });
      expect(await runGo(client)).toBe('successful');
    } finally {
      await again.stop();
    }
  });
});
