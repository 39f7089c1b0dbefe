import { fork } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ApiClient, createClient } from '@pipewright/client';
import Database from 'better-sqlite3';
import type { Databases } from './database.js';
import { type ServerProcess, startServer } from './processes.js';

export const SERVER_BIN = fileURLToPath(
  new URL('../../../apps/server/bin/pipewright-server.js', import.meta.url),
);
export const SERVERS_DIR = fileURLToPath(new URL('../servers/', import.meta.url));
export const DATABASE_FILE = 'pipewright.db';

export interface Pipewright extends ServerProcess {
  dataDir: string;
  /** The PostgreSQL database it runs on (its `--database`), or undefined for its data directory's SQLite file. */
  database?: string;
  apiKey: string;
  client(projectId?: string): ApiClient;
}

/** The databases of the run's servers (`--database` of run.ts); SQLite files until told. */
let runDatabases: Databases | undefined;

/** Makes every server started from now on (without a `--database` of its own) run on `databases`. */
export function useDatabases(databases: Databases | undefined): void {
  runDatabases = databases;
}

/**
 * The real server program over plain HTTP (as the baselines), without a rate limit, its
 * logs drained: what a deployment behind a TLS proxy runs. Its key is the first key of its
 * data directory, or `apiKey` for an instance started on a database another instance already
 * made (which writes no first key). Its database is the run's (`useDatabases`: on PostgreSQL,
 * the database of `dataDir`, the same at each start on it), unless `extra` names one.
 */
export async function startPipewright(
  dataDir: string,
  extra: string[] = [],
  env: Record<string, string> = {},
  apiKey?: string,
): Promise<Pipewright> {
  const given = extra.indexOf('--database');
  const database = given >= 0 ? extra[given + 1] || undefined : await runDatabases?.urlFor(dataDir);
  const server = await startServer(
    [
      SERVER_BIN,
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      dataDir,
      '--insecure-http',
      '--rate-limit',
      '0',
      '--body-limit',
      String(16 * 1024 * 1024),
      ...(given < 0 && database !== undefined ? ['--database', database] : []),
      ...extra,
    ],
    env,
  );
  const key = apiKey ?? readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim();
  return {
    ...server,
    dataDir,
    ...(database === undefined ? {} : { database }),
    apiKey: key,
    client: (projectId) =>
      createClient({ baseUrl: server.baseUrl, apiKey: key, ...(projectId ? { projectId } : {}) }),
  };
}

/** The arguments of the server program's admin commands (create-account...) that name the database of `server`. */
export const databaseArgs = (server: Pipewright): string[] => [
  '--data-dir',
  server.dataDir,
  ...(server.database === undefined ? [] : ['--database', server.database]),
];

/**
 * Writes a new identity key to `file` (0600), for `--identity-key-file`: the one key every
 * instance of a database must share (apps/server/src/identity-key.ts reads it).
 */
export async function writeIdentityKey(file: string): Promise<string> {
  // Loaded here only: the server's package is large, and the other benchmarks do without it.
  const { newSecretKeyText } = await import('@pipewright/server');
  writeFileSync(file, newSecretKeyText(), { mode: 0o600, flag: 'wx' });
  return file;
}

/** A new project with `specs` installed; returns its id. */
export async function installProject(server: Pipewright, name: string, specs: unknown[]): Promise<string> {
  const { data: project } = await server.client().POST('/projects', { body: { name } });
  if (!project) throw new Error('no project');
  await server.client().PUT('/projects/id/{id}/resources', {
    params: { path: { id: project.id } },
    body: { specs: specs as never },
  });
  return project.id;
}

/** The path of a new project of `server`, read by id: `GET /v0/projects/id/{id}`. */
export async function projectPath(server: Pipewright): Promise<string> {
  const { data: project } = await server.client().POST('/projects', { body: { name: 'bench' } });
  if (!project) throw new Error('no project');
  return `/v0/projects/id/${project.id}`;
}

export async function resourceId(
  client: ApiClient,
  type: 'command' | 'pipeline',
  name: string,
): Promise<string> {
  const { data } = await client.GET('/resources/type/{type}/name/{name}', {
    params: { path: { type, name } },
  });
  if (!data) throw new Error(`no ${type} ${name}`);
  return data.id;
}

/**
 * A read-only view of the SQLite file of `dataDir`, for counting without loading the API
 * (`viewOf` in database.ts reads a server's database, whichever it is).
 */
export function openReadOnly(dataDir: string): Database.Database {
  return new Database(join(dataDir, DATABASE_FILE), { readonly: true });
}

/**
 * Polls (every `intervalMs`, 20 ms unless told, at most `timeoutMs`) until `done()` is true. What
 * ends between two polls is seen up to `intervalMs` late: a timed run polls often.
 */
export async function until(
  done: () => boolean | Promise<boolean>,
  timeoutMs: number,
  intervalMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('benchmark did not finish in time');
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export interface BareSpawner {
  /** Spawns `argv` `count` times, `parallelism` at a time: the bare cost of the processes tasks run. */
  spawnMany(argv: string[], count: number, parallelism: number): Promise<void>;
  stop(): void;
}

/** The process baseline (servers/spawner.ts), a fresh process for each benchmark. */
export async function startBareSpawner(): Promise<BareSpawner> {
  const child = fork(join(SERVERS_DIR, 'spawner.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  await once(child, 'spawn');
  return {
    spawnMany: (argv, count, parallelism) =>
      new Promise((resolve, reject) => {
        child.once('message', (answer: { done?: true; error?: string }) =>
          answer.done ? resolve() : reject(new Error(`the bare spawner failed: ${answer.error}`)),
        );
        child.send({ argv, count, parallelism });
      }),
    stop: () => child.disconnect(),
  };
}

export const trivialTask = { type: 'task', version: 1, name: 'noop', data: { steps: [{ command: 'true' }] } };
