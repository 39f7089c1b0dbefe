import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { rm, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskUser } from '../runner/task-users.js';

/** Where one attempt of a task runs: its working directory, its TMPDIR and its context file beside them. */
export interface AttemptPaths {
  dir: string;
  workDir: string;
  tmpDir: string;
  contextPath: string;
}

/**
 * The directories of task attempts under the work root, `<task id>-<retry>/`.
 *
 * One is made with a few synchronous calls: each costs this thread less than a round trip
 * through libuv's thread pool, which the task would wait for. It is removed in the background
 * once its attempt has ended, off this thread and off the next task's way: removing a directory
 * can wait on the filesystem's journal, and what the steps left in it can be of any size.
 */
export function createAttemptDirectories(workRoot: string) {
  const removals = new Map<string, Promise<void>>();
  return {
    pathsOf(taskId: string, retry: number): AttemptPaths {
      const dir = join(workRoot, `${taskId}-${retry}`);
      return {
        dir,
        workDir: join(dir, 'work'),
        tmpDir: join(dir, 'tmp'),
        contextPath: join(dir, 'context.json'),
      };
    },

    /** Makes the attempt's directories and its context file holding `context`: the task user's when there is one. */
    async make(paths: AttemptPaths, context: string, user?: TaskUser): Promise<void> {
      // A restarted task's first attempt has the same directory as its last first attempt.
      const removal = removals.get(paths.dir);
      if (removal) await removal;
      try {
        mkdirSync(paths.dir, { mode: 0o700 });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'EEXIST') throw error;
        // The work root is missing, or a crash left this directory behind.
        await rm(paths.dir, { recursive: true, force: true });
        mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
      }
      mkdirSync(paths.workDir, { mode: 0o700 });
      mkdirSync(paths.tmpDir, { mode: 0o700 });
      writeFileSync(paths.contextPath, context, { mode: 0o600 });
      if (user) {
        for (const path of [paths.dir, paths.workDir, paths.tmpDir, paths.contextPath]) {
          chownSync(path, user.uid, user.gid);
        }
      }
    },

    /** Starts removing the attempt's directory. Never fails: what cannot be removed stays. */
    remove(paths: AttemptPaths): void {
      const removal = removeNow(paths).finally(() => removals.delete(paths.dir));
      removals.set(paths.dir, removal);
    },

    /** Resolves once every removal started has ended. */
    async settled(): Promise<void> {
      await Promise.all(removals.values());
    },
  };
}

async function removeNow(paths: AttemptPaths): Promise<void> {
  try {
    // What an attempt whose steps left nothing holds: a few calls, where a recursive removal takes twice as many.
    await unlink(paths.contextPath);
    await rmdir(paths.workDir);
    await rmdir(paths.tmpDir);
    await rmdir(paths.dir);
  } catch {
    await rm(paths.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
