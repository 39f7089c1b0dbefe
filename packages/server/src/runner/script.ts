import { chmodSync, chownSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskUser } from './task-users.js';

/** The script's file name; `index` is 0-based, the name 1-based like messages. */
export function scriptName(index: number): string {
  return `step-${index + 1}.sh`;
}

/**
 * The argv that runs a script: its own `#!` interpreter, or /bin/sh with `set -eu`; the step's
 * arguments follow, which the script reads as `$1`, `$2`...
 */
export function scriptArgv(path: string, code: string, args: readonly string[] = []): string[] {
  return [...(code.startsWith('#!') ? [path] : ['/bin/sh', '-eu', path]), ...args];
}

/** The interpreter a `#!` line names ('' when it names none), undefined without such a line. */
export function shebangInterpreter(code: string): string | undefined {
  if (!code.startsWith('#!')) return undefined;
  const firstLine = code.slice(2).split('\n', 1)[0] ?? '';
  return firstLine.trim().split(/[ \t]/, 1)[0] ?? '';
}

/**
 * Writes the script into `scriptDir` (which the steps cannot write to), executable by its owner
 * only (the task user, when there is one), and returns its absolute path. The file is made anew
 * ('wx' fails on anything already there, a link included). Synchronous, as the attempt's
 * directories are made (attempt-directories.ts): a few calls on the server's own work root.
 */
export function writeScript(scriptDir: string, index: number, code: string, owner?: TaskUser): string {
  const path = join(scriptDir, scriptName(index));
  rmSync(path, { force: true });
  writeFileSync(path, code, { mode: 0o700, flag: 'wx' });
  // The umask may have narrowed the mode.
  chmodSync(path, 0o700);
  if (owner) chownSync(path, owner.uid, owner.gid);
  return path;
}

/** Never fails: a script left behind does no harm, the caller empties `scriptDir` anyway. */
export function removeScript(scriptDir: string, index: number): void {
  try {
    rmSync(join(scriptDir, scriptName(index)), { force: true });
  } catch {
    // Left for the caller.
  }
}
