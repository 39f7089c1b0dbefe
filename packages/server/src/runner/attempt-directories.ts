import { chownSync, close, closeSync, mkdirSync, open, openSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, rm, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Spawner } from './spawner.js';
import type { TaskUser } from './task-users.js';
import { removeTree } from './tree-removal.js';

/** Where one attempt of a task runs. */
export interface Attempt {
  /** The attempt's slot, the server's; the runner writes `code` steps' scripts here. */
  dir: string;
  /** The working directory (and HOME): the task user's. */
  workDir: string;
  /** Its TMPDIR: the task user's. */
  tmpDir: string;
  /** The file at PIPEWRIGHT_CONTEXT_PATH: the task user's, 0600. */
  contextPath: string;
}

/**
 * The attempt directories of a work root: slots `<n>/`, numbered by the server, each holding an
 * attempt's working directory, TMPDIR and context file, new for each attempt: no inode is handed
 * to two attempts, so a process of another task that holds one open (a descriptor passed to it,
 * a working directory inside) never reaches a later attempt.
 *
 * A slot is the server's (0711 with task users: they may pass through, not list nor write), so a
 * task can neither put a link where the server is about to write (a script, the context file) nor
 * swap the entries the server removes.
 *
 * With task users, a slot is reused once nothing of its last attempt runs (its task user swept):
 * its entries are removed and made anew in the background, off this thread, and the next attempt
 * only writes its context and hands the entries to its user. Why: on a file system mounted with
 * `discard` every block freed is trimmed on the spot, and making a file or a directory waits for
 * the removals under way, which cost this thread dearly per task when each attempt made and
 * removed its own directory in the work root (bench/README.md, scheduler). Otherwise (no task users, a
 * container step, past `idleLimit` slots waiting), a slot is removed whole. Trees that task users
 * may still change are removed through `spawner` (see removeTree).
 */
export function createAttemptDirectories(
  spawner: Spawner,
  workRoot: string,
  forTaskUsers: boolean,
  idleLimit: number,
) {
  /** Slots with new entries, waiting for an attempt, oldest first. */
  const idle = new Set<string>();
  /** Slots given back, waiting for their task user's sweep. */
  const unswept = new Set<string>();
  const background = new Set<Promise<void>>();
  const slotMode = forTaskUsers ? 0o711 : 0o700;
  let made = 0;
  let closed = false;

  const track = (work: Promise<void>): void => {
    const tracked = work.catch(() => undefined).finally(() => background.delete(tracked));
    background.add(tracked);
  };

  const attemptIn = (dir: string): Attempt => ({
    dir,
    workDir: join(dir, 'work'),
    tmpDir: join(dir, 'tmp'),
    contextPath: join(dir, 'context.json'),
  });

  /** A new slot. Synchronous: each call costs this thread less than a round trip through libuv's pool. */
  const newSlot = (): Attempt => {
    mkdirSync(workRoot, { recursive: true, mode: slotMode });
    for (;;) {
      made += 1;
      const attempt = attemptIn(join(workRoot, String(made)));
      try {
        mkdirSync(attempt.dir, { mode: slotMode });
      } catch (error) {
        // Left from before this runner (the program empties its work root at start): the next number.
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw error;
      }
      mkdirSync(attempt.workDir, { mode: 0o700 });
      mkdirSync(attempt.tmpDir, { mode: 0o700 });
      writeFileSync(attempt.contextPath, '', { mode: 0o600, flag: 'wx' });
      return attempt;
    }
  };

  /** Removes a slot's entries; what a trivial task leaves takes a call per entry. */
  const removeEntries = async (attempt: Attempt): Promise<void> => {
    await unlink(attempt.contextPath).catch(ignoreMissing);
    for (const dir of [attempt.workDir, attempt.tmpDir]) {
      await rmdir(dir).catch((error: NodeJS.ErrnoException) =>
        error.code === 'ENOTEMPTY' || error.code === 'EEXIST'
          ? removeTree(spawner, dir, forTaskUsers)
          : ignoreMissing(error),
      );
    }
    // Scripts left by a step whose removal failed: the server's own entries.
    for (const name of await readdir(attempt.dir)) await rm(join(attempt.dir, name), { force: true });
  };

  const drop = (attempt: Attempt) =>
    track(
      removeEntries(attempt)
        .then(() => rmdir(attempt.dir))
        .catch(() => removeTree(spawner, attempt.dir, forTaskUsers)),
    );

  /** Gives a slot whose last attempt cannot run any more new entries, and puts it back in use. */
  const renew = async (attempt: Attempt): Promise<void> => {
    await removeEntries(attempt);
    await mkdir(attempt.workDir, { mode: 0o700 });
    await mkdir(attempt.tmpDir, { mode: 0o700 });
    await createEmptyFile(attempt.contextPath, 0o600);
    if (closed) throw new Error('closed');
    idle.add(attempt.dir);
    // Past the limit, the slot waiting longest goes.
    for (const dir of idle) {
      if (idle.size <= idleLimit) break;
      idle.delete(dir);
      drop(attemptIn(dir));
    }
  };

  return {
    /**
     * The directories of an attempt starting now, with its context file holding `context`; the
     * task user's when there is one.
     */
    take(context: string, user?: TaskUser): Attempt {
      const reused = idle.values().next().value;
      if (reused !== undefined) idle.delete(reused);
      const attempt = reused === undefined ? newSlot() : attemptIn(reused);
      try {
        // New and empty, in a slot no task can write to.
        const fd = openSync(attempt.contextPath, 'r+');
        try {
          writeFileSync(fd, context);
        } finally {
          closeSync(fd);
        }
        if (user) {
          for (const path of [attempt.workDir, attempt.tmpDir, attempt.contextPath]) {
            chownSync(path, user.uid, user.gid);
          }
        }
      } catch (error) {
        drop(attempt);
        throw error;
      }
      return attempt;
    },

    /**
     * The attempt has ended. With task users, `quiet` resolves once nothing of it can run any more
     * (its user swept): its slot is then renewed for a later attempt; without it, or without task
     * users, the slot is removed.
     */
    giveBack(attempt: Attempt, quiet?: Promise<void>): void {
      if (!forTaskUsers || !quiet) {
        drop(attempt);
        return;
      }
      unswept.add(attempt.dir);
      void quiet.then(() => {
        if (!unswept.delete(attempt.dir)) return; // removed at close
        track(renew(attempt).catch(() => drop(attempt)));
      });
    },

    /** Resolves once the renewals and removals under way have ended. */
    async settled(): Promise<void> {
      while (background.size > 0) await Promise.all(background);
    },

    /**
     * Removes the slots waiting, and those given back whose user is not swept yet (what runs
     * there now cannot lead the removal out), and resolves once all work in the background has ended.
     */
    async close(): Promise<void> {
      closed = true;
      for (const dir of [...idle, ...unswept]) drop(attemptIn(dir));
      idle.clear();
      unswept.clear();
      await this.settled();
    },
  };
}

/** A new empty file: an open and a close, without the file handle and writes of fs/promises' writeFile. */
function createEmptyFile(path: string, mode: number): Promise<void> {
  return new Promise((resolve, reject) => {
    open(path, 'wx', mode, (error, fd) => {
      if (error) reject(error);
      else close(fd, (closeError) => (closeError ? reject(closeError) : resolve()));
    });
  });
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}
