import { mkdirSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Where one attempt of a task runs: its working directory, and its context file beside it. */
export interface AttemptPaths {
  dir: string;
  workDir: string;
  contextPath: string;
}

/**
 * The directories of task attempts under the work root, `<task id>-<retry>/`.
 *
 * They are made and removed with a few synchronous calls: each costs this thread less than a
 * round trip through libuv's thread pool (the wake-ups of another thread, on a busy machine,
 * cost more than the calls), and a task would wait for each round trip. Only a working
 * directory that the steps left files in, of any size, is removed in the background.
 */
export function createAttemptDirectories(workRoot: string) {
  const removals = new Map<string, Promise<void>>();
  return {
    pathsOf(taskId: string, retry: number): AttemptPaths {
      const dir = join(workRoot, `${taskId}-${retry}`);
      return { dir, workDir: join(dir, 'work'), contextPath: join(dir, 'context.json') };
    },

    /** Makes the attempt's directories, and its context file holding `context`. */
    async make(paths: AttemptPaths, context: string): Promise<void> {
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
      writeFileSync(paths.contextPath, context, { mode: 0o600 });
    },

    /** Removes the attempt's directory, or starts to. Never fails: what cannot be removed stays. */
    remove(paths: AttemptPaths): void {
      try {
        // What an attempt whose steps left nothing holds.
        unlinkSync(paths.contextPath);
        rmdirSync(paths.workDir);
        rmdirSync(paths.dir);
      } catch {
        const removal = rm(paths.dir, { recursive: true, force: true })
          .catch(() => undefined)
          .finally(() => removals.delete(paths.dir));
        removals.set(paths.dir, removal);
      }
    },

    /** Resolves once every removal started has ended. */
    async settled(): Promise<void> {
      await Promise.all(removals.values());
    },
  };
}
