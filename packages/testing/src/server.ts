import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiClient, createClient } from '@pipewright/client';
import { lastLine, type RunningProgram, runProgram, startProgram } from './program.js';

/** The certificate that the program made in `dataDir` at its first start. */
export const certificateFile = (dataDir: string) => join(dataDir, 'tls', 'cert.pem');

/**
 * A client of a running program, trusting the self-signed certificate of its data directory,
 * with `apiKey`, working in `projectId` when given.
 */
export function clientOf(
  program: RunningProgram,
  dataDir: string,
  apiKey: string,
  projectId?: string,
): ApiClient {
  return createClient({
    baseUrl: program.url.replace(/\/v0$/, ''),
    apiKey,
    ca: readFileSync(certificateFile(dataDir)),
    ...(projectId ? { projectId } : {}),
  });
}

export interface RunningServer {
  /** Where it answers, without /v0: the dashboard's origin, as PIPEWRIGHT_API_URL holds it. */
  url: string;
  /** The admin key of the organization "default", made by the first start. */
  apiKey: string;
  /** The self-signed certificate the first start made. */
  caFile: string;
  dataDir: string;
  program: RunningProgram;
  /** A client with the admin key (or `apiKey`), working in `projectId` when given. */
  client(projectId?: string, apiKey?: string): ApiClient;
  /** A new organization with an admin account; its API key. */
  createOrganization(name: string, adminEmail: string): Promise<string>;
  /** Stops the program (SIGTERM), waits for its end, and removes its data directory. */
  stop(): Promise<void>;
}

export interface ServerOptions {
  /**
   * Whether tasks run as users of their own, as the program does by default when it runs as
   * root. Off unless asked: steps that call a program of this checkout by its path cannot reach
   * it as those users when the checkout is in a private directory (a clone under /root).
   */
  taskUsers?: boolean;
}

/**
 * The real server program on an ephemeral port of 127.0.0.1 with a fresh data directory, once
 * it listens (bounded).
 */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pipewright-server-'));
  const removeDataDir = () => rmSync(dataDir, { recursive: true, force: true });
  const args = ['--listen', '127.0.0.1:0', '--data-dir', dataDir];
  if (!options.taskUsers) args.push('--task-users', 'off');
  let program: RunningProgram;
  try {
    program = await startProgram(args);
  } catch (error) {
    removeDataDir();
    throw error;
  }
  const apiKey = readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim();
  return {
    url: program.url.replace(/\/v0$/, ''),
    apiKey,
    caFile: certificateFile(dataDir),
    dataDir,
    program,
    client: (projectId, key = apiKey) => clientOf(program, dataDir, key, projectId),
    async createOrganization(name, adminEmail) {
      const created = await runProgram([
        'create-organization',
        name,
        '--admin-email',
        adminEmail,
        '--data-dir',
        dataDir,
      ]);
      if (created.code !== 0)
        throw new Error(`create-organization exited with ${created.code}:\n${created.stderr}`);
      return lastLine(created.stdout);
    },
    async stop() {
      await program.stop();
      removeDataDir();
    },
  };
}
