import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAttemptDirectories } from '../../src/scheduler/attempt-directories.js';

let root: string;
let workRoot: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'attempt-directories-test-'));
  workRoot = join(root, 'work');
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const modeOf = (path: string) => statSync(path).mode & 0o777;
const never = new Promise<void>(() => undefined);

describe('attempt directories', () => {
  it('makes a working directory and a TMPDIR (0700) and the context file (0600) in a slot of the work root', () => {
    const attempts = createAttemptDirectories(workRoot, true);
    const attempt = attempts.take('{"a":1}');
    expect(attempt.dir.startsWith(`${workRoot}/`)).toBe(true);
    expect([modeOf(attempt.dir), modeOf(attempt.workDir), modeOf(attempt.tmpDir)]).toEqual([
      0o711, 0o700, 0o700,
    ]);
    expect(modeOf(attempt.contextPath)).toBe(0o600);
    expect(readFileSync(attempt.contextPath, 'utf8')).toBe('{"a":1}');
    expect(readdirSync(attempt.workDir)).toEqual([]);
  });

  it('reuses a slot given back once emptied: leftovers gone, links not followed, modes and context renewed', async () => {
    const attempts = createAttemptDirectories(workRoot, true);
    const first = attempts.take('{"long":"a context longer than the next one"}');
    const outside = join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep'), 'kept');
    mkdirSync(join(first.workDir, 'deep', 'er'), { recursive: true });
    writeFileSync(join(first.workDir, 'deep', 'er', 'file'), 'x');
    symlinkSync(outside, join(first.workDir, 'link'));
    writeFileSync(join(first.tmpDir, 'scratch'), 'x');
    writeFileSync(join(first.dir, 'step-1.sh'), 'echo left behind');
    chmodSync(first.workDir, 0o777);
    chmodSync(first.contextPath, 0o644);

    attempts.giveBack(first);
    await attempts.settled();
    const second = attempts.take('{"short":1}');

    expect(second).toEqual(first);
    expect(readdirSync(second.dir).sort()).toEqual(['context.json', 'tmp', 'work']);
    expect(readdirSync(second.workDir)).toEqual([]);
    expect(readdirSync(second.tmpDir)).toEqual([]);
    expect([modeOf(second.workDir), modeOf(second.contextPath)]).toEqual([0o700, 0o600]);
    expect(readFileSync(second.contextPath, 'utf8')).toBe('{"short":1}');
    expect(readFileSync(join(outside, 'keep'), 'utf8')).toBe('kept');
  });

  it('does not reuse a slot until its task user is swept', async () => {
    const attempts = createAttemptDirectories(workRoot, true);
    const first = attempts.take('{}');
    attempts.giveBack(first, never);
    await attempts.settled();
    expect(attempts.take('{}').dir).not.toBe(first.dir);
  });

  it('without task users, gives the next attempt a new working directory, out of reach of what held the old one', async () => {
    const attempts = createAttemptDirectories(workRoot, false);
    const first = attempts.take('{}');
    expect(modeOf(first.dir)).toBe(0o700);
    // A process that outlived its step, its working directory the attempt's, writes later.
    const late = spawn('sh', ['-c', 'read go; touch late 2>/dev/null; exit 0'], {
      cwd: first.workDir,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    attempts.giveBack(first);
    await attempts.settled();
    const second = attempts.take('{}');
    expect(second.workDir).toBe(first.workDir);
    late.stdin.end('go\n');
    await once(late, 'exit');
    expect(readdirSync(second.workDir)).toEqual([]);
  });

  it('does not write through a context file swapped for a link: the slot is dropped for a new one', async () => {
    const attempts = createAttemptDirectories(workRoot, false);
    const first = attempts.take('{}');
    const target = join(root, 'target');
    writeFileSync(target, 'untouched');
    chmodSync(target, 0o640);
    rmSync(first.contextPath);
    symlinkSync(target, first.contextPath);
    attempts.giveBack(first);
    await attempts.settled();
    const second = attempts.take('{"b":2}');
    await attempts.settled();
    expect(readFileSync(second.contextPath, 'utf8')).toBe('{"b":2}');
    expect(second.dir).not.toBe(first.dir);
    expect(existsSync(first.dir)).toBe(false);
    expect(readFileSync(target, 'utf8')).toBe('untouched');
    expect(modeOf(target)).toBe(0o640);
  });
});
