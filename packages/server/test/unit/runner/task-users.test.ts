import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createReaper } from '../../../src/runner/reaper.js';
import {
  createTaskUsers,
  type TaskUsers,
  taskUsersProblem,
  type UidRange,
} from '../../../src/runner/task-users.js';
import { claimUidRange } from '../../helpers/uid-ranges.js';
import { waitFor } from '../../helpers/wait.js';

/** The reaper as the server runs it, for a process of its own: tests run after the build. */
const BUILT_REAPER = fileURLToPath(new URL('../../../dist/runner/reaper.js', import.meta.url));

/** Whether a test may start a process in PID and mount namespaces of its own, with securebits. */
const canIsolate =
  process.getuid?.() === 0 &&
  spawnSync('unshare', [
    '--pid',
    '--fork',
    '--mount-proc',
    'setpriv',
    '--securebits',
    '+no_setuid_fixup',
    'true',
  ]).status === 0;

const asRoot = process.getuid?.() === 0;

// Users of a range no account uses, beyond every default range (2000000000 and the 99 million
// above), this run's alone: servers of other tests, and another clone's suite running meanwhile,
// sweep their whole range.
const claimed = asRoot ? claimUidRange(2_140_000_000, 10) : undefined;
const RANGE: UidRange = claimed?.range ?? { first: 2_140_000_000, last: 2_140_000_009 };

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

/**
 * Starts, as `uid`, a fork chain: each process forks and exits at once, its child goes on, so
 * every process lives for microseconds and the chain's pids keep changing (what a scan of /proc
 * then a kill per pid misses). Each one adds a byte to a heartbeat file; returns how to read its
 * size.
 */
async function startForkChainAs(uid: number, dir: string): Promise<() => number> {
  const heartbeat = join(dir, `chain-${uid}`);
  writeFileSync(heartbeat, '');
  chownSync(heartbeat, uid, uid);
  const program = 'open(my $f, ">>", $ARGV[0]) or die; while (1) { syswrite($f, "."); exit if fork(); }';
  spawn('perl', ['-e', program, heartbeat], { uid, gid: uid, cwd: '/', stdio: 'ignore', detached: true });
  const size = () => statSync(heartbeat).size;
  // Fifty generations show that the chain runs; on a loaded machine a fork can take a tenth of
  // a second, so a thousand took over a minute there.
  await waitFor(
    async () => size(),
    (bytes) => bytes > 50,
  );
  return size;
}

/** Whether what `size` reads stays the same for a while: the chain that grows it has ended. */
async function stopsGrowing(size: () => number): Promise<boolean> {
  const before = size();
  await new Promise((resolve) => setTimeout(resolve, 300));
  return size() === before;
}

/** Task users of RANGE, once the start's sweep is done and `ahead` of them are ready. */
async function readyUsers(ahead: number): Promise<TaskUsers> {
  const users = createTaskUsers(RANGE, { ahead });
  await users.sweepAll();
  await waitFor(
    async () => users.available,
    (count) => count === ahead,
  );
  return users;
}

describe.skipIf(!asRoot)('task users (as root)', () => {
  // A user of its own, outside RANGE, whose last user is the reaper's of the users under test.
  const reaper = createReaper(RANGE.last + 100);
  let dir = '';
  let users: ReturnType<typeof createTaskUsers> | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'task-users-'));
    // The users write their heartbeat files in it.
    chmodSync(dir, 0o711);
  });
  afterEach(async () => {
    users?.close();
    // Without a race: whatever a failed test left, fork chains included, ends here.
    await reaper.reap(Array.from({ length: RANGE.last - RANGE.first + 1 }, (_, k) => RANGE.first + k));
  });
  afterAll(() => {
    reaper.close();
    claimed?.lock.release();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hands out users reaped first, round-robin, a given-back one once reaped again', async () => {
    let readied = 0;
    users = createTaskUsers(
      // Three users, and the reaper's own.
      { first: RANGE.first, last: RANGE.first + 3 },
      {
        ahead: 3,
        onReady: () => {
          readied += 1;
        },
      },
    );
    // Nothing is handed out before the start's sweep has readied users.
    expect(users.available).toBe(0);
    expect(() => users?.take()).toThrow('no task user is ready');
    await users.sweepAll();
    await waitFor(
      async () => users?.available,
      (count) => count === 3,
    );
    const [a, b, c] = [users.take(), users.take(), users.take()];
    expect([a, b, c].map((user) => user.uid)).toEqual([RANGE.first, RANGE.first + 1, RANGE.first + 2]);
    expect(a).toEqual({ uid: RANGE.first, gid: RANGE.first });
    expect(() => users?.take()).toThrow('no task user is ready');
    const readiedBefore = readied;
    await users.giveBack(b);
    await waitFor(
      async () => users?.available,
      (count) => count === 1,
    );
    expect(readied).toBeGreaterThan(readiedBefore);
    expect(users.take().uid).toBe(RANGE.first + 1);
  });

  it('kills what a given-back user left running, daemons included, and spares users in use', async () => {
    users = await readyUsers(2);
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

  it('kills a fork chain that a given-back user left, which no scan of /proc can keep up with', async () => {
    users = await readyUsers(1);
    const user = users.take();
    const chain = await startForkChainAs(user.uid, dir);
    await users.giveBack(user);
    expect(await stopsGrowing(chain)).toBe(true);
  });

  it('hands out a user whose processes outlived the previous server only once they are killed', async () => {
    const chain = await startForkChainAs(RANGE.first, dir);
    users = await readyUsers(1);
    expect(users.take().uid).toBe(RANGE.first);
    expect(await stopsGrowing(chain)).toBe(true);
  });

  it('kills a process whose main thread has exited while its other threads run on', async () => {
    users = await readyUsers(1);
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
    await leaveProcessesAs(RANGE.last - 1);
    users = createTaskUsers(RANGE, { ahead: 1 });
    expect(await users.sweepAll()).toBe(true);
    expect(processesOf(RANGE.last - 1)).toEqual([]);
  });

  it('reaps every user of one call, one after the other, and no other', async () => {
    const reaped = [RANGE.first, RANGE.first + 1, RANGE.first + 2];
    const spared = RANGE.first + 3;
    for (const uid of [...reaped, spared]) await leaveProcessesAs(uid);
    expect(await reaper.reap(reaped)).toEqual([]);
    await waitFor(
      async () => reaped.flatMap(processesOf),
      (pids) => pids.length === 0,
    );
    expect(processesOf(spared)).toHaveLength(2);
  });

  it.skipIf(!canIsolate)(
    'kills nothing while its capabilities outlast the change of ids (securebits say so)',
    async () => {
      const uid = RANGE.first + 4;
      // In a PID namespace of its own, where a kill(-1) with CAP_KILL reaches only this script's
      // processes: a sleeper of the user and one of root's, both alive after the reap.
      const script = `
        import { spawn, spawnSync } from 'node:child_process';
        import { createReaper } from ${JSON.stringify(BUILT_REAPER)};
        const sleeper = (user) => spawn('sleep', ['300'], { ...user, stdio: 'ignore' });
        const children = [sleeper({ uid: ${uid}, gid: ${uid} }), sleeper({})];
        const reaper = createReaper(${RANGE.last});
        const failed = await reaper.reap([${uid}]);
        await new Promise((resolve) => setTimeout(resolve, 300));
        const alive = children.map((child) => child.exitCode === null && child.signalCode === null);
        process.stdout.write(JSON.stringify({ failed, alive }));
        reaper.close();
        for (const child of children) child.kill('SIGKILL');`;
      const child = spawn(
        'unshare',
        ['--pid', '--fork', '--mount-proc', 'setpriv', '--securebits', '+no_setuid_fixup', '--'].concat(
          process.execPath,
          ['--input-type=module', '-e', script],
        ),
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      await once(child, 'close');
      expect(JSON.parse(output)).toEqual({ failed: [uid], alive: [true, true] });
    },
  );

  it('never reaps root, whose kill(-1) would end every process of the host', async () => {
    await expect(reaper.reap([0])).rejects.toThrow('not user ids the reaper takes: 0');
  });

  it('hands out no user it could not reap, and says so once', async () => {
    const failures: unknown[] = [];
    // Root, which is never reaped: every try fails.
    users = createTaskUsers(
      { first: 0, last: 1 },
      { ahead: 1, onReapFailed: (error) => failures.push(error) },
    );
    expect(() => users?.take()).toThrow('no task user is ready');
    await waitFor(
      async () => failures.length,
      (count) => count > 0,
    );
    // The retry a second later fails again, unreported.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toContain('not user ids the reaper takes: 0');
    expect(users.available).toBe(0);
  });

  it('can run here: root, /proc, the range mapped, perl', () => {
    expect(taskUsersProblem(RANGE)).toBeUndefined();
  });
});

describe('task users, where they cannot work', () => {
  it('says why when the range is not mapped in the user namespace', () => {
    const problem = taskUsersProblem({ first: 2 ** 32 - 10, last: 2 ** 32 + 10 });
    expect(problem).toMatch(asRoot ? /not all mapped/ : /does not run as root/);
  });
});
