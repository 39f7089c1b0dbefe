import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  bootId,
  isRecordedGroup,
  processIdentity,
  stopRecordedGroup,
} from '../../../src/runner/process-identity.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function sleeper(file = 'sleep', detached = false): ChildProcess {
  const child = spawn(file, ['30'], { stdio: 'ignore', detached });
  children.push(child);
  return child;
}

/** Seconds since boot, from /proc/uptime. */
const uptime = () => Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
/** Clock ticks per second: 100 on every Linux this runs on (getconf CLK_TCK). */
const TICKS = 100;

describe('processIdentity', () => {
  it("is this boot's id and the process's start time, the same at every read, another process's differing", async () => {
    const before = uptime();
    const [a, b] = [sleeper(), sleeper()];
    const identity = processIdentity(a.pid ?? 0);
    const [boot, start] = identity?.split('/') ?? [];
    expect(boot).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    expect(bootId()).toBe(boot);
    // Started within this test, in clock ticks since boot.
    expect(Number(start)).toBeGreaterThanOrEqual(Math.floor(before * TICKS) - 1);
    expect(Number(start)).toBeLessThanOrEqual(Math.ceil(uptime() * TICKS) + 1);
    expect(processIdentity(a.pid ?? 0)).toBe(identity);
    expect(processIdentity(b.pid ?? 0)).not.toBe(undefined);
    expect(processIdentity(process.pid)).not.toBe(identity);
  });

  it('reads the start time past a command name holding spaces and parentheses', () => {
    const dir = mkdtempSync(join(tmpdir(), 'process-identity-'));
    dirs.push(dir);
    const odd = join(dir, 'a) b (c');
    copyFileSync('/bin/sleep', odd);
    const before = uptime();
    const child = sleeper(odd);
    const start = Number(processIdentity(child.pid ?? 0)?.split('/')[1]);
    expect(start).toBeGreaterThanOrEqual(Math.floor(before * TICKS) - 1);
    expect(start).toBeLessThanOrEqual(Math.ceil(uptime() * TICKS) + 1);
  });

  it('is undefined for a process that does not exist', () => {
    expect(processIdentity(2 ** 31 - 1)).toBeUndefined();
  });
});

describe('isRecordedGroup', () => {
  it.each<{ name: string; recorded: string | undefined; leaderNow: string | undefined; kill: boolean }>([
    { name: 'its leader, the very process', recorded: 'boot1/500', leaderNow: 'boot1/500', kill: true },
    {
      name: 'its leader gone: the number may name a newer group',
      recorded: 'boot1/500',
      leaderNow: undefined,
      kill: false,
    },
    {
      name: 'its number now names another process',
      recorded: 'boot1/500',
      leaderNow: 'boot1/900',
      kill: false,
    },
    { name: 'recorded before a reboot', recorded: 'boot0/500', leaderNow: undefined, kill: false },
    {
      name: 'recorded before a reboot, the number reused',
      recorded: 'boot0/500',
      leaderNow: 'boot1/500',
      kill: false,
    },
    { name: 'recorded without identity', recorded: undefined, leaderNow: undefined, kill: false },
    {
      name: 'recorded without identity, its number taken',
      recorded: undefined,
      leaderNow: 'boot1/900',
      kill: false,
    },
  ])('$name: kill is $kill', ({ recorded, leaderNow, kill }) => {
    expect(isRecordedGroup(recorded, leaderNow, 'boot1')).toBe(kill);
  });
});

describe('stopRecordedGroup', () => {
  it('kills a recorded group only while its number names the very leader recorded', async () => {
    // A process group of its own, as a step's.
    const leader = sleeper('sleep', true);
    const group = leader.pid ?? 0;
    const identity = processIdentity(group);
    const exited = once(leader, 'exit');

    expect(stopRecordedGroup(group, `${bootId()}/1`)).toBe('spared');
    expect(stopRecordedGroup(group, undefined)).toBe('spared');
    expect(processIdentity(group)).toBe(identity);

    expect(stopRecordedGroup(group, identity)).toBe('stopped');
    expect(await exited).toEqual([null, 'SIGKILL']);
  });
});
