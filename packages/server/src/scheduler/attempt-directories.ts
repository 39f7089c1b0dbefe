import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  fchownSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskUser } from '../runner/task-users.js';

/** Where one attempt of a task runs. */
export interface Attempt {
  /** The slot: the server's, holding the others; the runner writes `code` steps' scripts here. */
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
const KEPT = new Set([WORK, TMP, CONTEXT]);

/**
 * The attempt directories of a work root: slots `<n>/`, each holding a working directory, a
 * TMPDIR and a context file, made for an attempt and reused by later ones once emptied.
 *
 * The slot itself is the server's (0711 with task users: they may pass through, not list nor
 * write), so a task can neither put a link where the server is about to write (a script, the
 * context file) nor swap what the server removes for a link elsewhere.
 *
 * Why reuse: removing a directory or a file frees its blocks, and on a file system mounted with
 * `discard` (as the CI machines' is) each freed block is trimmed on the spot, which costs more
 * than the rest of a trivial task's bookkeeping. A slot is reused only once nothing of its last
 * attempt can write in it: with task users, once that user is swept (no process left); without,
 * its working directory and TMPDIR are replaced, since a process that left its step's group may
 * still hold them.
 */
export function createAttemptDirectories(workRoot: string, forTaskUsers: boolean) {
  const idle: Attempt[] = [];
  const cleanings = new Set<Promise<void>>();
  let made = 0;

  const slotOf = (dir: string): Attempt => ({
    dir,
    workDir: join(dir, WORK),
    tmpDir: join(dir, TMP),
    contextPath: join(dir, CONTEXT),
  });

  const slotMode = forTaskUsers ? 0o711 : 0o700;
  const newSlotDirectory = (): string => {
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

  /** A new slot, with its context file. Synchronous: each call costs this thread less than a round trip through libuv's pool. */
  const make = (context: string, user: TaskUser | undefined): Attempt => {
    const attempt = slotOf(newSlotDirectory());
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

  /** An emptied slot for `user`: its context file rewritten in place, which frees no block. */
  const reuse = (attempt: Attempt, context: string, user: TaskUser | undefined): Attempt => {
    const fd = openSync(attempt.contextPath, constants.O_WRONLY | constants.O_NOFOLLOW);
    try {
      const length = writeSync(fd, context, 0);
      ftruncateSync(fd, length);
      if (user) fchownSync(fd, user.uid, user.gid);
    } finally {
      closeSync(fd);
    }
    if (user) {
      chownSync(attempt.workDir, user.uid, user.gid);
      chownSync(attempt.tmpDir, user.uid, user.gid);
    }
    return attempt;
  };

  /** Drops a slot that cannot be reused: removed off this thread. */
  const drop = (attempt: Attempt): void => {
    const removal = rm(attempt.dir, { recursive: true, force: true })
      .catch(() => undefined)
      .finally(() => cleanings.delete(removal));
    cleanings.add(removal);
  };

  /**
   * What the last attempt left in a slot, modes it changed put back; undefined when the slot
   * cannot be reused. Without task users, the working directory and TMPDIR go whole.
   */
  const leftoversOf = (attempt: Attempt): string[] | undefined => {
    try {
      const leftovers = readdirSync(attempt.dir)
        .filter((name) => !KEPT.has(name))
        .map((name) => join(attempt.dir, name));
      if (!forTaskUsers) return [...leftovers, attempt.workDir, attempt.tmpDir];
      for (const dir of [attempt.workDir, attempt.tmpDir]) {
        leftovers.push(...readdirSync(dir).map((name) => join(dir, name)));
        chmodSync(dir, 0o700);
      }
      chmodSync(attempt.contextPath, 0o600);
      return leftovers;
    } catch {
      return undefined;
    }
  };

  /**
   * Empties a slot given back and puts it back in use. An empty one (what a trivial task leaves)
   * takes a few synchronous calls, as making one does; leftovers, which can be of any size, are
   * removed off this thread (rm does not follow links, and the slot's own entries cannot be
   * swapped for links: the slot is the server's).
   */
  const clean = (attempt: Attempt): void => {
    const leftovers = leftoversOf(attempt);
    if (leftovers === undefined) {
      drop(attempt);
      return;
    }
    if (leftovers.length === 0) {
      idle.push(attempt);
      return;
    }
    const removal = (async () => {
      for (const path of leftovers) await rm(path, { recursive: true, force: true });
      if (!forTaskUsers) {
        await mkdir(attempt.workDir, { mode: 0o700 });
        await mkdir(attempt.tmpDir, { mode: 0o700 });
      }
    })()
      .then(
        () => {
          idle.push(attempt);
        },
        () => drop(attempt),
      )
      .finally(() => cleanings.delete(removal));
    cleanings.add(removal);
  };

  return {
    /**
     * The directories for an attempt starting now, with its context file holding `context`;
     * belonging to the task user when there is one.
     */
    take(context: string, user?: TaskUser): Attempt {
      const attempt = idle.pop();
      if (attempt === undefined) return make(context, user);
      try {
        return reuse(attempt, context, user);
      } catch {
        // Something else changed the slot (an operator, a task without a user of its own): a new one.
        drop(attempt);
        return make(context, user);
      }
    },

    /**
     * The attempt has ended: its slot is emptied in the background, once `quiet` resolves (its
     * task user swept: nothing of it runs any more), and taken again later.
     */
    giveBack(attempt: Attempt, quiet?: Promise<void>): void {
      if (quiet) void quiet.then(() => clean(attempt));
      else clean(attempt);
    },

    /** Resolves once every slot being emptied is. */
    async settled(): Promise<void> {
      await Promise.all(cleanings);
    },
  };
}
