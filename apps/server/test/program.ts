import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/pipewright-server.js', import.meta.url));
/** How long a start or an admin command may take before it is taken as hung (a busy machine). */
const STARTUP_CAP_MS = 60_000;

export interface RunningServer {
  process: ChildProcess;
  /** The URL of API v0 as the server logged it. */
  url: string;
  stdout: () => string;
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the real program and waits (bounded) for its "listening" log line; `watch` sees its
 * standard error so far each time more arrives, before that line too.
 */
export function startProgram(
  args: string[],
  env: Record<string, string> = {},
  watch?: (stderr: string) => void,
): Promise<RunningServer> {
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
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${stderr}`));
    }, STARTUP_CAP_MS);
    const failedToStart = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${stderr}`));
    };
    child.once('exit', failedToStart);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      watch?.(stderr);
      const listening = stderr
        .split('\n')
        .filter((line) => line.startsWith('{') && line.endsWith('}'))
        .map((line) => JSON.parse(line) as { message: string; url?: string })
        .find((entry) => entry.message === 'listening');
      if (!listening?.url) return;
      clearTimeout(timer);
      child.off('exit', failedToStart);
      resolve({
        process: child,
        url: listening.url,
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

/** Runs one admin command to its end. */
export async function runProgram(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], {
      timeout: STARTUP_CAP_MS,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

export function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

/**
 * Polls `check` until it returns a value, for at most `timeoutMs`: a bound for a broken run only,
 * generous enough for a machine several times slower than usual, so tests rarely give their own.
 */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Makes temp directories open to everyone (tasks, as task users, write there), all removed once
 * the calling test file has run.
 */
export function tempDirsForTasks(): (prefix: string) => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return (prefix) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    chmodSync(dir, 0o777);
    dirs.push(dir);
    return dir;
  };
}
