import { readFileSync } from 'node:fs';
import { type ApiClient, ApiError, createClient } from '@pipewright/client';
import type { ProjectChoice, Settings } from './config.js';
import { CliError, UsageError } from './errors.js';

/** A stream the program writes to, and what it knows about the terminal behind it. */
export interface Terminal {
  write(text: string): void;
  isTTY: boolean;
  /** Width of the terminal; undefined when the stream is not a terminal. */
  columns: number | undefined;
}

export function terminalOf(stream: NodeJS.WriteStream): Terminal {
  return {
    write: (text) => stream.write(text),
    get isTTY() {
      return stream.isTTY === true;
    },
    get columns() {
      // A terminal of unknown size (some pseudo-terminals say 0) is not fitted to.
      return stream.isTTY && stream.columns > 0 ? stream.columns : undefined;
    },
  };
}

export interface ProjectSession {
  id: string;
  /** A client that sends the project's id in X-Service-Project-Id. */
  client: ApiClient;
}

/** What commands use: the settings, clients made from them on demand, and the output streams. */
export interface Session {
  settings: Settings;
  stdout: Terminal;
  stderr: Terminal;
  /** A client without a current project (organization routes). */
  client(): ApiClient;
  /** The selected project; a usage error when none is. */
  project(): Promise<ProjectSession>;
  /** The selected project, or undefined when none is. */
  optionalProject(): Promise<ProjectSession | undefined>;
  /** A client working in the project of this id, selected or not. */
  projectClient(id: string): ApiClient;
}

// Identifiers are KSUIDs (27 base62 characters); names have no capital letters.
const KSUID = /^[0-9A-Za-z]{27}$/;

export function createSession(settings: Settings, stdout: Terminal, stderr: Terminal): Session {
  let ca: Buffer | undefined;
  let projectSession: Promise<ProjectSession> | undefined;

  const clientFor = (projectId?: string): ApiClient => {
    const { apiUrl, apiKey, caFile } = settings;
    if (!apiUrl)
      throw new UsageError('no server given: use --api-url, PIPEWRIGHT_API_URL or `pipewright login`');
    if (!apiKey)
      throw new UsageError('no API key given: use --api-key, PIPEWRIGHT_API_KEY or `pipewright login`');
    if (caFile && !ca) ca = readCa(caFile);
    // The URL is the server's, without /v0; forgive one given with it.
    const baseUrl = apiUrl.replace(/\/+$/, '').replace(/\/v0$/, '');
    return createClient({ baseUrl, apiKey, ...(projectId ? { projectId } : {}), ...(ca ? { ca } : {}) });
  };
  let orgClient: ApiClient | undefined;
  const client = () => {
    orgClient ??= clientFor();
    return orgClient;
  };

  const resolve = async (choice: ProjectChoice): Promise<ProjectSession> => {
    const id = await projectIdOf(client(), choice);
    return { id, client: clientFor(id) };
  };

  return {
    settings,
    stdout,
    stderr,
    client,
    project() {
      const choice = settings.project;
      if (!choice) {
        throw new UsageError(
          'no project selected: use --project NAME, PIPEWRIGHT_PROJECT_ID, PIPEWRIGHT_PROJECT_NAME, ' +
            'or a pipewright.json file such as {"project": "NAME"}',
        );
      }
      projectSession ??= resolve(choice);
      return projectSession;
    },
    async optionalProject() {
      return settings.project ? this.project() : undefined;
    },
    projectClient: clientFor,
  };
}

function readCa(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new CliError(`cannot read the certificate ${file}: ${(error as Error).message}`);
  }
}

/** The id of a project designated by id, by name, or by either. */
export async function projectIdOf(client: ApiClient, choice: Pick<ProjectChoice, 'kind' | 'value'>) {
  if (choice.kind === 'id') return choice.value;
  if (choice.kind === 'ref' && KSUID.test(choice.value) && /[A-Z]/.test(choice.value)) return choice.value;
  try {
    const { data } = await client.GET('/projects/name/{name}', { params: { path: { name: choice.value } } });
    if (!data) throw new CliError(`no answer for project ${choice.value}`);
    return data.id;
  } catch (error) {
    // A KSUID may, rarely, have no capital letter: it is an id after all.
    if (
      choice.kind === 'ref' &&
      KSUID.test(choice.value) &&
      error instanceof ApiError &&
      error.status === 404
    ) {
      return choice.value;
    }
    throw error;
  }
}
