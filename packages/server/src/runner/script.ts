import { chmod, chown, mkdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskUser } from './task-users.js';

/**
 * `code` steps are written to a hidden directory of the working directory, the one place both a local
 * process and a container (which mounts only the working directory) can read them. It is removed once
 * the step is over, so the working directory holds only what the steps made.
 */
const SCRIPT_DIRECTORY = '.pipewright';

/** The script's path relative to the working directory; `index` is 0-based, the name 1-based like messages. */
export function scriptPath(index: number): string {
  return `${SCRIPT_DIRECTORY}/step-${index + 1}.sh`;
}

/** The argv that runs a script: its own `#!` interpreter, or /bin/sh with `set -eu`. */
export function scriptArgv(path: string, code: string): string[] {
  return code.startsWith('#!') ? [path] : ['/bin/sh', '-eu', path];
}

/** The interpreter a `#!` line names ('' when it names none), undefined without such a line. */
export function shebangInterpreter(code: string): string | undefined {
  if (!code.startsWith('#!')) return undefined;
  const firstLine = code.slice(2).split('\n', 1)[0] ?? '';
  return firstLine.trim().split(/[ \t]/, 1)[0] ?? '';
}

/**
 * Writes the script, executable by its owner only (the task user, when there is one), and returns
 * its absolute path.
 */
export async function writeScript(
  workDir: string,
  index: number,
  code: string,
  owner?: TaskUser,
): Promise<string> {
  const directory = join(workDir, SCRIPT_DIRECTORY);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const path = join(workDir, scriptPath(index));
  await writeFile(path, code, { mode: 0o700 });
  // writeFile's mode applies only to a new file, and the umask may have narrowed it.
  await chmod(path, 0o700);
  if (owner) {
    await chown(directory, owner.uid, owner.gid);
    await chown(path, owner.uid, owner.gid);
  }
  return path;
}

/** Never fails: a script left behind does no harm, the caller removes the working directory anyway. */
export async function removeScript(workDir: string, index: number): Promise<void> {
  await rm(join(workDir, scriptPath(index)), { force: true }).catch(() => undefined);
  // Fails, and stays, when a step put files of its own there.
  await rmdir(join(workDir, SCRIPT_DIRECTORY)).catch(() => undefined);
}
