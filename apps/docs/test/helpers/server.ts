import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type ApiClient, createClient } from '@pipewright/client';

// The server program, found through the workspace dependency rather than a path into its sources.
const SERVER_BIN = join(
  dirname(createRequire(import.meta.url).resolve('pipewright-server/package.json')),
  'bin',
  'pipewright-server.js',
);

export interface RunningServer {
  /** A client with the admin key the first start created. */
  client(projectId?: string): ApiClient;
  stop(): Promise<void>;
}

/**
 * The real server program on an ephemeral port with a fresh data directory, once its
 * "listening" log line came (bounded). Its tasks run as its own user: the docs tests run none.
 */
export async function startServer(): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pipewright-docs-server-'));
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
  const baseUrl = v0Url.replace(/\/v0$/, '');
  const apiKey = readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim();
  const ca = readFileSync(join(dataDir, 'tls', 'cert.pem'));
  return {
    client: (projectId) => createClient({ baseUrl, apiKey, ca, ...(projectId ? { projectId } : {}) }),
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
