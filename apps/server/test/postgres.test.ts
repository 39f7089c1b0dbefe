import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type ApiClient, ApiError } from '@pipewright/client';
import { clientOf, lastLine, runProgram, tempDirs } from '@pipewright/testing';
import { type PostgresCluster, startPostgresCluster } from '@pipewright/testing/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, programStarter } from './program.js';

// The program on PostgreSQL (--database), with a throwaway cluster of its own: where its data
// lives, across restarts and admin commands, and what its clients see while the database is down.

const tempDir = tempDirs();
const start = programStarter();

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgresCluster();
});
afterAll(() => cluster?.stop());

/** A project with a one-step pipeline behind command `go`; returns its id. */
async function projectWithCommand(admin: ApiClient): Promise<string> {
  const { data: project } = await admin.POST('/projects', { body: { name: `p-${Date.now()}` } });
  const projectId = project?.id ?? '';
  await admin.PUT('/projects/id/{id}/resources', {
    params: { path: { id: projectId } },
    body: {
      specs: [
        { type: 'task', version: 1, name: 'hello', data: { steps: [{ code: 'echo hello' }] } },
        { type: 'pipeline', version: 1, name: 'main', data: { tasks: [{ task: 'hello' }] } },
        { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['main'] } },
      ],
    },
  });
  return projectId;
}

/** Executes `go`; resolves to the pipeline's final status. */
async function runGo(client: ApiClient): Promise<string> {
  const { data: go } = await client.GET('/resources/type/{type}/name/{name}', {
    params: { path: { type: 'command', name: 'go' } },
  });
  const { data: execution } = await client.POST('/commands/id/{id}/execute', {
    params: { path: { id: go?.id ?? '' } },
    body: {},
  });
  const [pipelineId = ''] = execution?.pipeline_ids ?? [];
  return eventually(async () => {
    const { data } = await client.GET('/pipelines/id/{id}', { params: { path: { id: pipelineId } } });
    return data && ['successful', 'failed', 'aborted'].includes(data.status) ? data.status : undefined;
  });
}

describe('pipewright-server --database postgres://...', () => {
  it('keeps its data in that database, across restarts, and its admin commands reach it', async () => {
    const database = await cluster.createDatabase('program_data');
    const dataDir = tempDir('pipewright-postgres-');
    const first = await start(dataDir, ['--database', database]);
    const apiKey = lastLine(first.stdout());
    const admin = clientOf(first, dataDir, apiKey);
    const projectId = await projectWithCommand(admin);
    expect(await runGo(clientOf(first, dataDir, apiKey, projectId))).toBe('successful');
    // Nothing went to SQLite.
    expect(existsSync(join(dataDir, 'pipewright.db'))).toBe(false);

    const created = await runProgram([
      'create-organization',
      'other',
      '--admin-email',
      'other@example.test',
      '--database',
      database,
    ]);
    expect(created.code).toBe(0);
    const otherKey = lastLine(created.stdout);
    expect((await clientOf(first, dataDir, otherKey).GET('/org')).data?.name).toBe('other');
    expect(await first.stop()).toBe(0);

    // Started again on the same database: the same data, no new first key, and tasks still run.
    const second = await start(dataDir, ['--database', database]);
    expect(second.stdout()).not.toContain('Its API key is shown only this once');
    const again = clientOf(second, dataDir, apiKey, projectId);
    expect((await again.GET('/pipelines')).data?.elements.map((p) => p.status)).toEqual(['successful']);
    expect(await runGo(again)).toBe('successful');
    expect((await clientOf(second, dataDir, otherKey).GET('/org')).data?.name).toBe('other');
  });

  it('answers 503 while its database is down, and serves again by itself once it is back', async () => {
    const database = await cluster.createDatabase('program_down');
    const dataDir = tempDir('pipewright-postgres-');
    const program = await start(dataDir, ['--database', database]);
    const apiKey = lastLine(program.stdout());
    const admin = clientOf(program, dataDir, apiKey);
    const client = clientOf(program, dataDir, apiKey, await projectWithCommand(admin));
    expect(await runGo(client)).toBe('successful');

    cluster.down();
    try {
      const failure = await admin.POST('/projects', { body: { name: 'while-down' } }).catch((error) => error);
      expect(failure).toBeInstanceOf(ApiError);
      expect(failure).toMatchObject({ status: 503, code: 'service_unavailable' });
    } finally {
      cluster.up();
    }
    // Without a restart of the program: its pool connects anew.
    await eventually(async () => {
      const result = await admin.GET('/org').catch(() => undefined);
      return result?.data?.name;
    });
    expect(await runGo(client)).toBe('successful');
    const { data: projects } = await admin.GET('/projects');
    expect(projects?.elements.map((p) => p.name)).not.toContain('while-down');
  });

  it('makes a second server on the database wait, which takes over once the first stops', async () => {
    const database = await cluster.createDatabase('program_standby');
    const firstDir = tempDir('pipewright-postgres-');
    const first = await start(firstDir, ['--database', database]);
    const apiKey = lastLine(first.stdout());
    const projectId = await projectWithCommand(clientOf(first, firstDir, apiKey));

    let log = '';
    const secondDir = tempDir('pipewright-postgres-');
    // The identity key goes with the database: every server of it opens the same identities.
    const key = ['--identity-key-file', join(firstDir, 'identity.key')];
    const starting = start(secondDir, ['--database', database, ...key], (stderr) => {
      log = stderr;
    });
    await eventually(() =>
      log.includes('waiting for the server that uses the database to stop') ? true : undefined,
    );
    expect(log).not.toContain('"message":"listening"');
    expect(await first.stop()).toBe(0);

    const second = await starting;
    // The first server's certificate is not the second's: the key and the data are the database's.
    const client = clientOf(second, secondDir, apiKey, projectId);
    expect(await runGo(client)).toBe('successful');
  });
});
