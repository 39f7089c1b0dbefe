import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Where commands are looked up when the environment has no PATH: the one /bin/sh itself uses then, so
 * that a step and the scripts it runs agree. The server's own PATH is never consulted (the runner does
 * not read the server's environment).
 */
export const DEFAULT_SEARCH_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export type Lookup = { found: true; path: string } | { found: false; problem: string };

/**
 * Finds a command the way execvp does (a name with a slash is a path relative to `cwd`, otherwise it is
 * searched in `searchPath`), so that a command that cannot run is reported before anything is spawned.
 */
export function findExecutable(command: string, searchPath: string, cwd: string): Lookup {
  const candidates = command.includes('/')
    ? [resolve(cwd, command)]
    : searchPath.split(':').map((directory) => resolve(cwd, directory, command));
  let notExecutable = false;
  for (const candidate of candidates) {
    const kind = fileKind(candidate);
    if (kind === 'executable') return { found: true, path: candidate };
    if (kind === 'not_executable') notExecutable = true;
  }
  return {
    found: false,
    problem: `${notExecutable ? 'permission denied' : 'command not found'}: ${command}`,
  };
}

export function isExecutableFile(path: string): boolean {
  return fileKind(path) === 'executable';
}

/**
 * Synchronous: a stat and an access cost the calling thread a few microseconds, where a round trip
 * through libuv's thread pool costs each step a wait of up to milliseconds on a busy machine
 * (measured by `npm run bench -- scheduler`).
 */
function fileKind(path: string): 'missing' | 'executable' | 'not_executable' {
  try {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats === undefined) return 'missing';
    if (!stats.isFile()) return 'not_executable';
  } catch {
    return 'missing';
  }
  try {
    accessSync(path, constants.X_OK);
    return 'executable';
  } catch {
    return 'not_executable';
  }
}
