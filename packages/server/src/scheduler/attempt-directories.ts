import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { readdir, rm, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { runProcess } from '../runner/process.js';
import type { TaskUser } from '../runner/task-users.js';

/** Where one attempt of a task runs. */
export interface Attempt {
  /** The slot: the server's, holding the others; the runner writes `code` steps' scripts here. */
  dir: string;
  /** The working directory (and HOME): the task user's, new for each attempt. */
  workDir: string;
  /** Its TMPDIR: the task user's, new for each attempt. */
  tmpDir: string;
  /** The file at PIPEWRIGHT_CONTEXT_PATH: the task user's, 0600, new for each attempt. */
  contextPath: string;
}

/**
 * The attempt directories of a work root: slots `<n>/`, each holding an attempt's working
 * directory, TMPDIR and context file, all three made anew for each attempt.
 *
 * The slot itself is the server's (0711 with task users: they may pass through, not list nor
 * write), so a task can neither put a link where the server is about to write (a script, the
 * context file) nor swap the entries the server reads or removes.
 *
 * A slot is reused by later attempts, which saves making and removing a directory per attempt
 * (on a file system mounted with `discard`, as the CI machines' is, each block freed is trimmed
 * on the spot), but only once nothing of its last attempt can run any more (its task user swept)
 * and what it left is removed. Never its entries: another task's process may hold one open (a
 * descriptor passed to it, a working directory inside), and must not reach the next attempt.
 * Without task users nothing says a task's processes are gone (a daemon may write there by path
 * later), and a slot is removed whole.
 */
export function createAttemptDirectories(workRoot: string, forTaskUsers: boolean) {
  const idle: string[] = [];
  const removals = new Set<Promise<void>>();
  // Without task users, tasks run as the server's user: nothing to guard a removal against.
  const removeTree = forTaskUsers
    ? removeTreeByDescriptors
    : (dir: string) => rm(dir, { recursive: true, force: true });
  const slotMode = forTaskUsers ? 0o711 : 0o700;
  let made = 0;

  const attemptIn = (dir: string): Attempt => ({
    dir,
    workDir: join(dir, 'work'),
    tmpDir: join(dir, 'tmp'),
    contextPath: join(dir, 'context.json'),
  });

  const newSlot = (): string => {
    mkdirSync(workRoot, { recursive: true, mode: slotMode });
    for (;;) {
      made += 1;
      const dir = join(workRoot, String(made));
      try {
        mkdirSync(dir, { mode: slotMode });
        return dir;
      } catch (error) {
        // Left from before this scheduler (the program empties its work root at start): the next number.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
  };

  /**
   * Makes the attempt's entries. Synchronous: each call costs this thread less than a round trip
   * through libuv's pool, which the task would wait for.
   */
  const fill = (attempt: Attempt, context: string, user: TaskUser | undefined): Attempt => {
    mkdirSync(attempt.workDir, { mode: 0o700 });
    mkdirSync(attempt.tmpDir, { mode: 0o700 });
    writeFileSync(attempt.contextPath, context, { mode: 0o600, flag: 'wx' });
    if (user) {
      for (const path of [attempt.workDir, attempt.tmpDir, attempt.contextPath]) {
        chownSync(path, user.uid, user.gid);
      }
    }
    return attempt;
  };

  const track = (removal: Promise<void>): void => {
    const tracked = removal.catch(() => undefined).finally(() => removals.delete(tracked));
    removals.add(tracked);
  };

  /** Removes a slot whole (not to be reused). */
  const drop = (dir: string): void => track(removeTree(dir));

  /** Empties a slot whose last attempt cannot run any more, then puts it back in use. */
  const empty = async (attempt: Attempt): Promise<void> => {
    await unlink(attempt.contextPath).catch(ignoreMissing);
    for (const dir of [attempt.workDir, attempt.tmpDir]) {
      // What a trivial task leaves: an empty directory, removed in one call. Anything in it, in a tree.
      await rmdir(dir).catch((error: NodeJS.ErrnoException) =>
        error.code === 'ENOTEMPTY' || error.code === 'EEXIST' ? removeTree(dir) : ignoreMissing(error),
      );
    }
    // Scripts left by a step whose removal failed: the slot's own, root's to remove.
    for (const name of await readdir(attempt.dir)) await rm(join(attempt.dir, name), { force: true });
    idle.push(attempt.dir);
  };

  return {
    /**
     * The directories for an attempt starting now, with its context file holding `context`;
     * belonging to the task user when there is one.
     */
    take(context: string, user?: TaskUser): Attempt {
      const reused = idle.pop();
      if (reused !== undefined) {
        try {
          return fill(attemptIn(reused), context, user);
        } catch {
          // Changed behind the server's back (an operator): a new slot.
          drop(reused);
        }
      }
      return fill(attemptIn(newSlot()), context, user);
    },

    /**
     * The attempt has ended. With `quiet`, which resolves once nothing of the attempt can run any
     * more (its task user swept), its slot is emptied then and reused; without, it is removed.
     */
    giveBack(attempt: Attempt, quiet?: Promise<void>): void {
      if (quiet) void quiet.then(() => track(empty(attempt).catch(() => drop(attempt.dir))));
      else drop(attempt.dir);
    },

    /** Resolves once every removal started has ended. */
    async settled(): Promise<void> {
      await Promise.all(removals);
    },
  };
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}

/**
 * Removes a directory tree that processes of other task users may still change (one holding a
 * directory of it open): with GNU rm, which walks it by directory descriptors (openat, unlinkat),
 * so that a directory swapped for a link meanwhile cannot lead the server (root) out of the tree,
 * as a removal by paths would. Spawned through the spawner process, off this thread.
 */
async function removeTreeByDescriptors(dir: string): Promise<void> {
  const end = await runProcess({
    argv: ['/bin/rm', '-rf', '--one-file-system', '--', dir],
    environment: {},
    cwd: '/',
    signal: new AbortController().signal,
    graceMs: 1000,
    outputLimitBytes: 0,
    onOutput: () => undefined,
  });
  if (end.kind !== 'exited' || end.exitCode !== 0) throw new Error(`could not remove ${dir}`);
}
