import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createTaskUsers, sweepUsers, taskUsersProblem, type UidRange } from '../../src/runner/task-users.js';
import { waitFor } from '../helpers/wait.js';

// Users of a range no account uses, beyond every default range (2000000000 and the 99 million
// above): servers of other tests running meanwhile sweep their whole range.
const RANGE: UidRange = { first: 2_140_000_000, last: 2_140_000_009 };

/** Live (not zombie) processes whose real uid is `uid`. */
function processesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const status = readFileSync(`/proc/${name}/status`, 'latin1');
      if (/^State:\s*[ZX]/m.test(status)) continue;
      if (/^Uid:\s*(\d+)/m.exec(status)?.[1] === String(uid)) pids.push(Number(name));
    } catch {
      // gone
    }
  }
  return pids;
}

/**
 * Starts, as `uid`, a shell that leaves a child in its own session (as a daemon would)
 * and one in its group, then exits: the case a process-group kill misses.
 */
async function leaveProcessesAs(uid: number): Promise<void> {
  const shell = spawn('/bin/sh', ['-c', 'setsid sleep 300 & sleep 300 & echo started'], {
    uid,
    gid: uid,
    cwd: '/',
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
  });
  await new Promise((resolve) => shell.stdout.once('data', resolve));
  await waitFor(
    async () => processesOf(uid),
    (pids) => pids.length === 2,
  );
}

const asRoot = process.getuid?.() === 0;

describe.skipIf(!asRoot)('task users (as root)', () => {
  let users: ReturnType<typeof createTaskUsers> | undefined;
  afterEach(async () => {
    users?.close();
    await sweepUsers(RANGE, new Set());
  });

  it('hands out distinct users round-robin, and a given-back user only once it is swept', async () => {
    let swept = 0;
    users = createTaskUsers({ first: RANGE.first, last: RANGE.first + 2 }, () => {
      swept += 1;
    });
    const a = users.take();
    const b = users.take();
    expect([a, b]).toEqual([
      { uid: RANGE.first, gid: RANGE.first },
      { uid: RANGE.first + 1, gid: RANGE.first + 1 },
    ]);
    const aSwept = users.giveBack(a);
    // Not swept yet: a is skipped.
    expect(users.take().uid).toBe(RANGE.first + 2);
    expect(() => users?.take()).toThrow('all 3 task users are in use');
    await aSwept;
    expect(swept).toBe(1);
    expect(users.take().uid).toBe(RANGE.first);
  });

  it('kills what a given-back user left running, daemons included, and spares users in use', async () => {
    users = createTaskUsers(RANGE);
    const finished = users.take();
    const running = users.take();
    await leaveProcessesAs(finished.uid);
    await leaveProcessesAs(running.uid);
    users.giveBack(finished);
    await waitFor(
      async () => processesOf(finished.uid),
      (pids) => pids.length === 0,
    );
    expect(processesOf(running.uid)).toHaveLength(2);
  });

  it('kills a process whose main thread has exited while its other threads run on', async () => {
    users = createTaskUsers(RANGE);
    const user = users.take();
    // The main thread ends alone (the exit system call, not exit_group): the process shows as a
    // zombie while its other thread sleeps on.
    const script = [
      'import ctypes, threading, time',
      'threading.Thread(target=time.sleep, args=(300,)).start()',
      'print("started", flush=True)',
      'ctypes.CDLL(None).syscall(60, 0)',
    ].join('\n');
    const python = spawn('/usr/bin/python3', ['-c', script], {
      uid: user.uid,
      gid: user.gid,
      cwd: '/',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    await new Promise((resolve) => python.stdout.once('data', resolve));
    const status = () => readFileSync(`/proc/${python.pid}/status`, 'latin1');
    await waitFor(
      async () => status(),
      (text) => /^State:\s*Z/m.test(text) && /^Threads:\s*2$/m.test(text),
    );
    const exited = once(python, 'exit');
    users.giveBack(user);
    const [, signal] = await exited;
    expect(signal).toBe('SIGKILL');
  });

  it('sweeps every user of the range at start, whatever a previous server left', async () => {
    await leaveProcessesAs(RANGE.last);
    users = createTaskUsers(RANGE);
    expect(await users.sweepAll()).toBe(true);
    expect(processesOf(RANGE.last)).toEqual([]);
  });

  it('can run here: root, /proc, the range mapped', () => {
    expect(taskUsersProblem(RANGE)).toBeUndefined();
  });
});

describe('task users, where they cannot work', () => {
  it('says why when the range is not mapped in the user namespace', () => {
    const problem = taskUsersProblem({ first: 2 ** 32 - 10, last: 2 ** 32 + 10 });
    expect(problem).toMatch(asRoot ? /not all mapped/ : /does not run as root/);
  });
});
