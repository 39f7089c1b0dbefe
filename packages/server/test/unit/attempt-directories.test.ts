import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
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
const swept = Promise.resolve();
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

  it('reuses a slot once its task user is swept, with new entries: what the last attempt left, or still holds, stays out', async () => {
    const attempts = createAttemptDirectories(workRoot, true);
    const first = attempts.take('{"first":1}');
    const outside = join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep'), 'kept');
    mkdirSync(join(first.workDir, 'deep', 'er'), { recursive: true });
    writeFileSync(join(first.workDir, 'deep', 'er', 'file'), 'x');
    symlinkSync(outside, join(first.workDir, 'link'));
    writeFileSync(join(first.tmpDir, 'scratch'), 'x');
    writeFileSync(join(first.dir, 'step-1.sh'), 'echo left behind');
    // A process of another task holding the working directory (its own), which writes later.
    const holder = spawn('sh', ['-c', 'read go; touch late 2>/dev/null; exit 0'], {
      cwd: first.workDir,
      stdio: ['pipe', 'ignore', 'ignore'],
    });

    attempts.giveBack(first, swept);
    await swept; // its emptying has started
    await attempts.settled();
    const second = attempts.take('{"second":2}');
    holder.stdin.end('go\n');
    await once(holder, 'exit');

    expect(second).toEqual(first);
    expect(readdirSync(second.dir).sort()).toEqual(['context.json', 'tmp', 'work']);
    expect(readdirSync(second.workDir)).toEqual([]);
    expect(readdirSync(second.tmpDir)).toEqual([]);
    expect(readFileSync(second.contextPath, 'utf8')).toBe('{"second":2}');
    expect(readFileSync(join(outside, 'keep'), 'utf8')).toBe('kept');
  });

  it('does not reuse a slot before its task user is swept', async () => {
    const attempts = createAttemptDirectories(workRoot, true);
    const first = attempts.take('{}');
    writeFileSync(join(first.workDir, 'still'), 'here');
    attempts.giveBack(first, never);
    await attempts.settled();
    expect(attempts.take('{}').dir).not.toBe(first.dir);
    expect(existsSync(join(first.workDir, 'still'))).toBe(true);
  });

  it('removes a slot whole when nothing says its processes are gone (no task users, a container)', async () => {
    const attempts = createAttemptDirectories(workRoot, false);
    const first = attempts.take('{}');
    expect(modeOf(first.dir)).toBe(0o700);
    writeFileSync(join(first.workDir, 'left'), 'x');
    attempts.giveBack(first);
    await attempts.settled();
    expect(existsSync(first.dir)).toBe(false);
    expect(attempts.take('{}').dir).not.toBe(first.dir);
  });

  it('removes a context file swapped for a link without touching what it points to', async () => {
    const attempts = createAttemptDirectories(workRoot, true);
    const first = attempts.take('{}');
    const target = join(root, 'target');
    writeFileSync(target, 'untouched');
    rmSync(first.contextPath);
    symlinkSync(target, first.contextPath);
    attempts.giveBack(first, swept);
    await swept; // its emptying has started
    await attempts.settled();
    const second = attempts.take('{"b":2}');
    expect(second.dir).toBe(first.dir);
    expect(readFileSync(second.contextPath, 'utf8')).toBe('{"b":2}');
    expect(readFileSync(target, 'utf8')).toBe('untouched');
  });
});
