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
import { type Attempt, createAttemptDirectories } from '../../src/scheduler/attempt-directories.js';

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

/** Gives an attempt back as swept, and waits until its slot is emptied. */
async function giveBackSwept(attempts: ReturnType<typeof createAttemptDirectories>, attempt: Attempt) {
  const swept = Promise.resolve();
  attempts.giveBack(attempt, swept);
  await swept; // the emptying has started
  await attempts.settled();
}

describe('attempt directories', () => {
  it('makes a working directory and a TMPDIR (0700) and the context file (0600) in a slot of the work root', async () => {
    const attempts = createAttemptDirectories(workRoot, true, 4);
    const attempt = attempts.take('{"a":1}', 'p1');
    expect(attempt.dir.startsWith(`${workRoot}/`)).toBe(true);
    expect([modeOf(attempt.dir), modeOf(attempt.workDir), modeOf(attempt.tmpDir)]).toEqual([
      0o711, 0o700, 0o700,
    ]);
    expect(modeOf(attempt.contextPath)).toBe(0o600);
    expect(readFileSync(attempt.contextPath, 'utf8')).toBe('{"a":1}');
    expect(readdirSync(attempt.workDir)).toEqual([]);
    await attempts.close();
  });

  it('reuses a slot for the same project once swept: directories emptied and taken back, context rewritten, nothing followed out', async () => {
    const attempts = createAttemptDirectories(workRoot, true, 4);
    const first = attempts.take('{"first":"a longer context"}', 'p1');
    const outside = join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep'), 'kept');
    mkdirSync(join(first.workDir, 'deep', 'er'), { recursive: true });
    writeFileSync(join(first.workDir, 'deep', 'er', 'file'), 'x');
    symlinkSync(outside, join(first.workDir, 'link'));
    writeFileSync(join(first.tmpDir, 'scratch'), 'x');
    writeFileSync(join(first.dir, 'step-1.sh'), 'echo left behind');
    chmodSync(first.tmpDir, 0o777);
    chmodSync(first.contextPath, 0o666);

    await giveBackSwept(attempts, first);
    const second = attempts.take('{"second":2}', 'p1');

    expect(second).toEqual(first);
    expect(readdirSync(second.dir).sort()).toEqual(['context.json', 'tmp', 'work']);
    expect(readdirSync(second.workDir)).toEqual([]);
    expect(readdirSync(second.tmpDir)).toEqual([]);
    expect([modeOf(second.workDir), modeOf(second.tmpDir), modeOf(second.contextPath)]).toEqual([
      0o700, 0o700, 0o600,
    ]);
    expect(readFileSync(second.contextPath, 'utf8')).toBe('{"second":2}');
    expect(readFileSync(join(outside, 'keep'), 'utf8')).toBe('kept');
    await attempts.close();
  });

  it("never gives a slot to another project's attempt, nor before its task user is swept", async () => {
    const attempts = createAttemptDirectories(workRoot, true, 4);
    const first = attempts.take('{}', 'p1');
    await giveBackSwept(attempts, first);
    expect(attempts.take('{}', 'p2').dir).not.toBe(first.dir);
    const mine = attempts.take('{}', 'p1');
    expect(mine.dir).toBe(first.dir);
    writeFileSync(join(mine.workDir, 'still'), 'here');
    attempts.giveBack(mine, never);
    expect(attempts.take('{}', 'p1').dir).not.toBe(first.dir);
    await attempts.close();
    expect(readFileSync(join(mine.workDir, 'still'), 'utf8')).toBe('here');
  });

  it('removes a slot whole without task users, after a container, past the idle limit, and at close', async () => {
    const withoutUsers = createAttemptDirectories(workRoot, false, 4);
    const first = withoutUsers.take('{}', 'p1');
    expect(modeOf(first.dir)).toBe(0o700);
    writeFileSync(join(first.workDir, 'left'), 'x');
    withoutUsers.giveBack(first, Promise.resolve());
    await withoutUsers.close();
    expect(existsSync(first.dir)).toBe(false);

    const attempts = createAttemptDirectories(workRoot, true, 1);
    const container = attempts.take('{}', 'p1');
    attempts.giveBack(container);
    const [a, b] = [attempts.take('{}', 'p1'), attempts.take('{}', 'p2')];
    await giveBackSwept(attempts, a);
    await giveBackSwept(attempts, b);
    await attempts.close();
    expect(readdirSync(workRoot)).toEqual([]);
  });
});
