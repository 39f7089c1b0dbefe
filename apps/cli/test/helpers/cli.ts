import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunningServer } from './server.js';

/** The built program, as users run it. */
export const CLI_BIN = fileURLToPath(new URL('../../bin/pipewright.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Variables besides PATH, HOME and XDG_CONFIG_HOME (which point to an empty temporary directory). */
  env?: Record<string, string>;
  cwd?: string;
  /** Standard input; it is closed after it (or at once without it). */
  input?: string;
}

const homes: string[] = [];

/** A temporary directory standing for the user's home; removed by cleanUpHomes(). */
export function temporaryHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'pipewright-cli-home-'));
  homes.push(home);
  return home;
}

export function cleanUpHomes(): void {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
}

/** Starts `command` with a home of its own (HOME, XDG_CONFIG_HOME); its standard input is left open. */
export function spawnInHome(command: string, args: string[], options: CliOptions = {}) {
  const home = temporaryHome();
  return spawn(command, args, {
    cwd: options.cwd ?? home,
    env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Starts the program with a home of its own; its standard input is left open. */
export function spawnCli(args: string[], options: CliOptions = {}) {
  return spawnInHome(process.execPath, [CLI_BIN, ...args], options);
}

/**
 * Feeds `input` to a started run, then collects what it prints until it ends (killed after a
 * bound); `what` names it in the error of a run that does not end.
 */
export function collectRun(
  child: ReturnType<typeof spawnInHome>,
  what: string,
  input = '',
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not end in time:\n${stdout}\n${stderr}`));
    }, 120_000); // a hung run only: a loaded machine may take seconds
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs the program to its end (killed after a bound) and collects what it printed. */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return collectRun(spawnCli(args, options), `pipewright ${args.join(' ')}`, options.input);
}

/** The environment a running task has: enough to use the program with no flags. */
export function connectionEnv(server: RunningServer, projectId?: string): Record<string, string> {
  return {
    PIPEWRIGHT_API_URL: server.url,
    PIPEWRIGHT_API_KEY: server.apiKey,
    PIPEWRIGHT_CA_FILE: server.caFile,
    ...(projectId ? { PIPEWRIGHT_PROJECT_ID: projectId } : {}),
  };
}
