import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type ApiClient, createClient } from '@pipewright/client';

// The server program, found through the workspace rather than a path into its sources (built
// before these tests: apps/cli/turbo.json).
const SERVER_BIN = join(
  dirname(createRequire(import.meta.url).resolve('pipewright-server/package.json')),
  'bin',
  'pipewright-server.js',
);

export interface RunningServer {
  /** The server's URL without /v0, as PIPEWRIGHT_API_URL holds it. */
  url: string;
  /** The admin key the first start created. */
  apiKey: string;
  /** The self-signed certificate the first start made. */
  caFile: string;
  /** A client with the admin key, for setting up and checking. */
  client(projectId?: string): ApiClient;
  stop(): Promise<void>;
}

export interface ServerOptions {
  /**
   * Whether tasks run as users of their own, as the server does by default when it runs as
   * root. Off unless asked: steps that call the CLI of this checkout by its path
   * (CLI_BIN) cannot reach it as those users when the checkout is in a private directory
   * (a clone under /root); a step calling `pipewright` gets the server's own copy, which they can.
   */
  taskUsers?: boolean;
}

/**
 * Starts the real server program on an ephemeral port with a fresh data directory, and
 * waits (bounded) for its "listening" log line.
 */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pipewright-cli-server-'));
  const argv = [SERVER_BIN, '--listen', '127.0.0.1:0', '--data-dir', dataDir];
  if (!options.taskUsers) argv.push('--task-users', 'off');
  const child = spawn(process.execPath, argv, {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const v0Url = await new Promise<string>((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not start:\n${stderr}`));
    }, 60_000); // a hung start only: a loaded machine may take seconds
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}:\n${stderr}`));
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const listening = stderr
        .split('\n')
        .filter((line) => line.startsWith('{') && line.endsWith('}'))
        .map((line) => JSON.parse(line) as { message: string; url?: string })
        .find((entry) => entry.message === 'listening');
      if (!listening?.url) return;
      clearTimeout(timer);
      resolve(listening.url);
    });
  });
  const url = v0Url.replace(/\/v0$/, '');
  const apiKey = readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim();
  const caFile = join(dataDir, 'tls', 'cert.pem');
  const ca = readFileSync(caFile);
  return {
    url,
    apiKey,
    caFile,
    client: (projectId) => createClient({ baseUrl: url, apiKey, ca, ...(projectId ? { projectId } : {}) }),
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let counter = 0;
/** A name no other test uses. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

/** A new project with these resources installed, and a client working in it. */
export async function projectWith(server: RunningServer, specs: unknown[] = []) {
  const { data: project } = await server.client().POST('/projects', { body: { name: uniqueName('p') } });
  if (!project) throw new Error('no project');
  if (specs.length > 0) {
    await server.client().PUT('/projects/id/{id}/resources', {
      params: { path: { id: project.id } },
      // Test specs are plain objects; the server validates them.
      body: { specs: specs as never[] },
    });
  }
  return { project, client: server.client(project.id) };
}
