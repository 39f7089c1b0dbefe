import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { type ApiClient, createClient } from '@pipewright/client';

// The server program of the workspace (built before these tests: apps/web/turbo.json).
const SERVER_BIN = join(
  dirname(createRequire(import.meta.url).resolve('pipewright-server/package.json')),
  'bin',
  'pipewright-server.js',
);

export interface RunningServer {
  /** Where it answers, without /v0: the dashboard's origin. */
  url: string;
  /** The admin key of the organization "default", made by the first start. */
  apiKey: string;
  client(projectId?: string, apiKey?: string): ApiClient;
  /** A new organization with an admin account; its API key. */
  createOrganization(name: string, adminEmail: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * The real server program (it serves the built dashboard) on an ephemeral port with a fresh
 * data directory, once its "listening" log line came (bounded).
 */
export async function startServer(): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pipewright-web-server-'));
  const argv = [SERVER_BIN, '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--task-users', 'off'];
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
    }, 20_000);
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
  const ca = readFileSync(join(dataDir, 'tls', 'cert.pem'));
  return {
    url,
    apiKey,
    client: (projectId, key = apiKey) =>
      createClient({ baseUrl: url, apiKey: key, ca, ...(projectId ? { projectId } : {}) }),
    async createOrganization(name, adminEmail) {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [SERVER_BIN, 'create-organization', name, '--admin-email', adminEmail, '--data-dir', dataDir],
        { timeout: 20_000 },
      );
      return stdout.trim().split('\n').at(-1) ?? '';
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
