import {
  chmodSync,
  chownSync,
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  writeFileSync,
} from 'node:fs';
import { mkdir, readdir, rm, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { runProcess } from '../runner/process.js';
import type { TaskUser } from '../runner/task-users.js';

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

const WORK = 'work';
const TMP = 'tmp';
const CONTEXT = 'context.json';

/**
 * The attempt directories of a work root: slots `<n>/`, numbered by the server, each holding an
 * attempt's working directory, TMPDIR and context file.
 *
 * A slot is the server's (0711 with task users: they may pass through, not list nor write), so a
 * task can neither put a link where the server is about to write (a script, the context file) nor
 * swap the entries the server empties or removes.
 *
 * With task users, a slot is reused by a later attempt of the same project, once nothing of its
 * last attempt runs (its task user swept): its working directory and TMPDIR emptied (made anew
 * when anything was left), its context file rewritten, all taken back by the server until handed
 * to the next task user. Why reuse: on a file system mounted with `discard` (as the CI machines'
 * is) each block freed is trimmed on the spot, and creating a file or a directory waits for the
 * removals under way. Why only within a project: a process of another task may hold an entry of
 * the slot open (a descriptor passed to it), through which it could still list the names in a
 * directory or read and write the context file; tasks of one project share their data anyway.
 * Otherwise, and past `idleLimit` slots waiting, a slot is removed whole.
 */
export function createAttemptDirectories(workRoot: string, forTaskUsers: boolean, idleLimit: number) {
  /** Emptied slots waiting for an attempt of their project, oldest first. */
  const idle = new Map<string, string>();
  /** The project of each slot in use. */
  const inUse = new Map<string, string>();
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
    workDir: join(dir, WORK),
    tmpDir: join(dir, TMP),
    contextPath: join(dir, CONTEXT),
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
        // Left from before this scheduler (the program empties its work root at start): the next number.
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw error;
      }
      mkdirSync(attempt.workDir, { mode: 0o700 });
      mkdirSync(attempt.tmpDir, { mode: 0o700 });
      return attempt;
    }
  };

  const idleSlotOf = (project: string): Attempt | undefined => {
    for (const [dir, owner] of idle) {
      if (owner !== project) continue;
      idle.delete(dir);
      return attemptIn(dir);
    }
    return undefined;
  };

  // Without task users, tasks run as the server's user: nothing to guard a removal against.
  const removeTree = forTaskUsers
    ? removeTreeByDescriptors
    : (dir: string) => rm(dir, { recursive: true, force: true });

  /** Removes a slot whole; what a trivial task leaves takes a call per entry. */
  const removeSlot = async (attempt: Attempt): Promise<void> => {
    await unlink(attempt.contextPath).catch(ignoreMissing);
    for (const dir of [attempt.workDir, attempt.tmpDir]) {
      await rmdir(dir).catch((error: NodeJS.ErrnoException) =>
        error.code === 'ENOTEMPTY' || error.code === 'EEXIST' ? removeTree(dir) : ignoreMissing(error),
      );
    }
    // Scripts left by a step whose removal failed: the server's own entries.
    for (const name of await readdir(attempt.dir)) await rm(join(attempt.dir, name), { force: true });
    await rmdir(attempt.dir);
  };
  const drop = (attempt: Attempt) => track(removeSlot(attempt).catch(() => removeTree(attempt.dir)));

  /**
   * Empties a slot whose last attempt cannot run any more and puts it back in use. Its directories
   * are taken back first (the server's, 0700), so that only a process holding one open can still
   * add to them; the cheap part is done here and now, what can take long off this thread.
   */
  const empty = (attempt: Attempt, project: string): void => {
    const leftovers: string[] = [];
    try {
      const uid = process.getuid?.() ?? 0;
      const gid = process.getgid?.() ?? 0;
      for (const path of [attempt.workDir, attempt.tmpDir, attempt.contextPath]) {
        chownSync(path, uid, gid);
        chmodSync(path, path === attempt.contextPath ? 0o600 : 0o700);
      }
      for (const dir of [attempt.workDir, attempt.tmpDir]) {
        if (readdirSync(dir).length > 0) leftovers.push(dir);
      }
      for (const name of readdirSync(attempt.dir)) {
        if (name !== WORK && name !== TMP && name !== CONTEXT) leftovers.push(join(attempt.dir, name));
      }
    } catch {
      drop(attempt);
      return;
    }
    const emptying = (async () => {
      for (const path of leftovers) {
        if (path === attempt.workDir || path === attempt.tmpDir) {
          await removeTree(path);
          await mkdir(path, { mode: 0o700 });
        } else {
          // Scripts whose removal failed: the server's entries of the slot.
          await rm(path, { force: true });
        }
      }
    })();
    track(
      emptying.then(
        () => {
          if (closed) {
            drop(attempt);
            return;
          }
          idle.set(attempt.dir, project);
          // Past the limit, the slot waiting longest goes.
          for (const [dir] of idle) {
            if (idle.size <= idleLimit) break;
            idle.delete(dir);
            drop(attemptIn(dir));
          }
        },
        () => drop(attempt),
      ),
    );
  };

  return {
    /**
     * The directories of an attempt of `project` starting now, with its context file holding
     * `context`; the task user's when there is one.
     */
    take(context: string, project: string, user?: TaskUser): Attempt {
      const reused = forTaskUsers ? idleSlotOf(project) : undefined;
      const attempt = reused ?? newSlot();
      inUse.set(attempt.dir, project);
      try {
        // Rewritten in place, which frees no block; the slot is the server's, so no link is there.
        const fd = openSync(attempt.contextPath, reused ? 'r+' : 'wx', 0o600);
        try {
          writeFileSync(fd, context);
          ftruncateSync(fd, Buffer.byteLength(context));
        } finally {
          closeSync(fd);
        }
        if (user) {
          for (const path of [attempt.workDir, attempt.tmpDir, attempt.contextPath]) {
            chownSync(path, user.uid, user.gid);
          }
        }
      } catch (error) {
        inUse.delete(attempt.dir);
        drop(attempt);
        throw error;
      }
      return attempt;
    },

    /**
     * The attempt has ended. With task users, `quiet` resolves once nothing of it can run any more
     * (its user swept): then its slot is emptied for a later attempt of its project; without it,
     * or without task users, the slot is removed.
     */
    giveBack(attempt: Attempt, quiet?: Promise<void>): void {
      const project = inUse.get(attempt.dir) ?? '';
      inUse.delete(attempt.dir);
      if (!forTaskUsers || !quiet) {
        drop(attempt);
        return;
      }
      void quiet.then(() => empty(attempt, project));
    },

    /** Resolves once the emptying and removals under way have ended. */
    async settled(): Promise<void> {
      while (background.size > 0) await Promise.all(background);
    },

    /** Removes the slots waiting, and resolves once all work in the background has ended. */
    async close(): Promise<void> {
      closed = true;
      for (const [dir] of idle) drop(attemptIn(dir));
      idle.clear();
      await this.settled();
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
