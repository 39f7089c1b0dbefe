import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { CliError } from './errors.js';

/** The project to work in, as it was designated. */
export type ProjectChoice =
  | { kind: 'id'; value: string; origin: string }
  | { kind: 'name'; value: string; origin: string }
  /** A name or an identifier: `--project`, pipewright.json and the saved configuration accept both. */
  | { kind: 'ref'; value: string; origin: string };

/** Where the server is, who calls it and in which project, whichever source said so. */
export interface Settings {
  apiUrl?: string;
  apiKey?: string;
  caFile?: string;
  project?: ProjectChoice;
  /** The pipeline of the running task (PIPEWRIGHT_PIPELINE_ID): the scratchpad's default. */
  pipelineId?: string;
}

export interface ConnectionFlags {
  'api-url'?: string;
  'api-key'?: string;
  project?: string;
  ca?: string;
}

/** The file `pipewright login` writes. */
export interface SavedConfig {
  api_url: string;
  api_key: string;
  ca_file?: string;
  project?: string;
}

export const PROJECT_FILE = 'pipewright.json';

/** $XDG_CONFIG_HOME/pipewright/config.json, ~/.config when the variable is unset (or not absolute). */
export function configFilePath(env: NodeJS.ProcessEnv): string {
  const base =
    env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'pipewright', 'config.json');
}

function readJsonObject(file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CliError(`${file} must hold a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

function stringMember(object: Record<string, unknown>, name: string, file: string): string | undefined {
  const value = object[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '')
    throw new CliError(`${file}: "${name}" must be a non-empty string`);
  return value;
}

export function readSavedConfig(file: string): Partial<SavedConfig> {
  if (!existsSync(file)) return {};
  const object = readJsonObject(file);
  return {
    api_url: stringMember(object, 'api_url', file),
    api_key: stringMember(object, 'api_key', file),
    ca_file: stringMember(object, 'ca_file', file),
    project: stringMember(object, 'project', file),
  };
}

/** Writes the configuration where only its owner can read it: directory 0700, file 0600, replaced atomically. */
export function writeSavedConfig(file: string, config: SavedConfig): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // mkdir leaves an existing directory's mode alone; this directory holds a secret.
  chmodSync(dir, 0o700);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
}

/** The nearest pipewright.json in `cwd` or one of its parents, and the project it selects. */
export function findProjectFile(cwd: string): { file: string; project?: string } | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const file = join(dir, PROJECT_FILE);
    if (existsSync(file)) return { file, project: stringMember(readJsonObject(file), 'project', file) };
    if (dirname(dir) === dir) return undefined;
  }
}

function projectFromEnvironment(env: NodeJS.ProcessEnv): ProjectChoice | undefined {
  if (env.PIPEWRIGHT_PROJECT_ID) {
    return { kind: 'id', value: env.PIPEWRIGHT_PROJECT_ID, origin: 'PIPEWRIGHT_PROJECT_ID' };
  }
  if (env.PIPEWRIGHT_PROJECT_NAME) {
    return { kind: 'name', value: env.PIPEWRIGHT_PROJECT_NAME, origin: 'PIPEWRIGHT_PROJECT_NAME' };
  }
  return undefined;
}

/**
 * Each setting from the first source that has it: flags, then the environment, then
 * pipewright.json (the project only), then the file `pipewright login` wrote. The files are
 * read only when an earlier source leaves something unset.
 */
export function resolveSettings(flags: ConnectionFlags, env: NodeJS.ProcessEnv, cwd: string): Settings {
  const settings: Settings = {
    apiUrl: flags['api-url'] ?? (env.PIPEWRIGHT_API_URL || undefined),
    apiKey: flags['api-key'] ?? (env.PIPEWRIGHT_API_KEY || undefined),
    caFile: flags.ca ?? (env.PIPEWRIGHT_CA_FILE || undefined),
    project: flags.project
      ? { kind: 'ref', value: flags.project, origin: '--project' }
      : projectFromEnvironment(env),
    pipelineId: env.PIPEWRIGHT_PIPELINE_ID || undefined,
  };
  if (!settings.project) {
    const found = findProjectFile(cwd);
    if (found?.project) settings.project = { kind: 'ref', value: found.project, origin: found.file };
  }
  if (!settings.apiUrl || !settings.apiKey || !settings.caFile || !settings.project) {
    const file = configFilePath(env);
    const saved = readSavedConfig(file);
    // The saved key, certificate and project belong to the saved server: never send them elsewhere.
    const sameServer = !settings.apiUrl || sameUrl(settings.apiUrl, saved.api_url);
    if (sameServer && saved.api_url) {
      settings.apiUrl ??= saved.api_url;
      settings.apiKey ??= saved.api_key;
      settings.caFile ??= saved.ca_file;
      if (!settings.project && saved.project)
        settings.project = { kind: 'ref', value: saved.project, origin: file };
    }
  }
  return settings;
}

function sameUrl(a: string, b: string | undefined): boolean {
  return b !== undefined && a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}
