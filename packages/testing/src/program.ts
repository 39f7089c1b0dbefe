import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

// The server program of the workspace, found by its package name. It is not a dependency of
// this package: the program depends on the CLI and the dashboard, whose tests use this package,
// so that would be a cycle. Each app's turbo.json builds the program before its tests instead.
const BIN = join(
  dirname(createRequire(import.meta.url).resolve('pipewright-server/package.json')),
  'bin',
  'pipewright-server.js',
);

/** How long a start or an admin command may take before it is taken as hung (a busy machine). */
const STARTUP_CAP_MS = 100_000;

export interface RunningProgram {
  process: ChildProcess;
  /** The URL of API v0 as the program logged it. */
  url: string;
  /** What it printed on its standard output so far. */
  stdout: () => string;
  /** What it printed on its standard error so far: its log, one JSON object a line. */
  stderr: () => string;
  /** Sends `signal` (SIGTERM by default) and resolves to the exit code once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * The entries of a program's log (its standard error so far), one JSON object a line. Only
 * whole lines: a pipe may hand over a line in pieces, and a piece can end with a `}` too.
 */
export function logEntries(stderr: string): ({ message: string } & Record<string, unknown>)[] {
  return stderr
    .slice(0, stderr.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((line) => line.startsWith('{') && line.endsWith('}'))
    .map((line) => JSON.parse(line));
}

/** The URL its "listening" log line gives, once standard error holds that line. */
function listeningUrl(stderr: string): string | undefined {
  return logEntries(stderr).find((entry) => entry.message === 'listening')?.url as string | undefined;
}

/**
 * Starts the real program with `args`, its environment only PATH and `env`, and waits (bounded)
 * for its "listening" log line; `watch` sees its standard error so far each time more arrives,
 * before that line too.
 */
export function startProgram(
  args: string[],
  env: Record<string, string> = {},
  watch?: (stderr: string) => void,
): Promise<RunningProgram> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let listening = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not start:\n${stderr}`));
    }, STARTUP_CAP_MS);
    const failedToStart = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}:\n${stderr}`));
    };
    child.once('exit', failedToStart);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      watch?.(stderr);
      if (listening) return;
      const url = listeningUrl(stderr);
      if (!url) return;
      listening = true;
      clearTimeout(timer);
      child.off('exit', failedToStart);
      resolve({
        process: child,
        url,
        stdout: () => stdout,
        stderr: () => stderr,
        stop: async (signal = 'SIGTERM') => {
          child.kill(signal);
          return exited;
        },
      });
    });
  });
}

export interface ProgramResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the program with `args` (an admin command) to its end, bounded. */
export async function runProgram(args: string[]): Promise<ProgramResult> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], {
      timeout: STARTUP_CAP_MS,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as ProgramResult;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The last line of a text: where the program prints a key it made. */
export function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}
