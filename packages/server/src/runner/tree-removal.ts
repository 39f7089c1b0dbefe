import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Spawner } from './spawner.js';

/**
 * The command that removes a directory tree processes of task users may still change (one holding
 * a directory of it open): GNU rm walks it by directory descriptors (openat, unlinkat), so that a
 * directory swapped for a link meanwhile cannot lead the server (root) out of the tree, as a
 * removal by paths would; it stays on the tree's file system.
 */
function treeRemovalArgv(dir: string): string[] {
  return ['/bin/rm', '-rf', '--one-file-system', '--', dir];
}

/**
 * Removes a tree where steps ran, through the spawner, off this thread: by descriptors when task
 * users ran there (see treeRemovalArgv); by paths otherwise, where steps ran as the server's own
 * user and there is nothing to guard the removal against.
 */
export async function removeTree(spawner: Spawner, dir: string, forTaskUsers: boolean): Promise<void> {
  if (!forTaskUsers) return rm(dir, { recursive: true, force: true });
  const end = await spawner.run({
    argv: treeRemovalArgv(dir),
    environment: {},
    cwd: '/',
    signal: new AbortController().signal,
    graceMs: 1000,
    outputLimitBytes: 0,
    onOutput: () => undefined,
  });
  if (end.kind !== 'exited' || end.exitCode !== 0) throw new Error(`could not remove ${dir}`);
}

/**
 * Removes a tree where steps ran as removeTree does, but blocking this thread: for a server
 * starting, which empties the work root a crashed server's tasks may still change (they are swept
 * later).
 */
export function removeTreeSync(dir: string, forTaskUsers: boolean): void {
  if (!forTaskUsers) {
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  const [command = '', ...args] = treeRemovalArgv(dir);
  execFileSync(command, args);
}
