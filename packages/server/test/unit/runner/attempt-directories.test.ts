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
import { type Attempt, createAttemptDirectories } from '../../../src/runner/attempt-directories.js';
import { createSpawner } from '../../../src/runner/spawner.js';
import { waitFor } from '../../helpers/wait.js';

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
/** The spawner that removes what task users may still change. */
const spawner = createSpawner();

/** Gives an attempt back as swept, and waits until its slot is emptied. */
async function giveBackSwept(attempts: ReturnType<typeof createAttemptDirectories>, attempt: Attempt) {
  const swept = Promise.resolve();
  attempts.giveBack(attempt, swept);
  await swept; // the emptying has started
  await attempts.settled();
}

describe('attempt directories', () => {
  it('makes a working directory and a TMPDIR (0700) and the context file (0600) in a slot of the work root', async () => {
    const attempts = createAttemptDirectories(spawner, workRoot, true, 4);
    const attempt = attempts.take('{"a":1}');
    expect(attempt.dir.startsWith(`${workRoot}/`)).toBe(true);
    expect([modeOf(attempt.dir), modeOf(attempt.workDir), modeOf(attempt.tmpDir)]).toEqual([
      0o711, 0o700, 0o700,
    ]);
    expect(modeOf(attempt.contextPath)).toBe(0o600);
    expect(readFileSync(attempt.contextPath, 'utf8')).toBe('{"a":1}');
    expect(readdirSync(attempt.workDir)).toEqual([]);
    await attempts.close();
  });

  it('reuses a slot once swept with new entries: what the last attempt left, or still holds open, stays out', async () => {
    const attempts = createAttemptDirectories(spawner, workRoot, true, 4);
    const first = attempts.take('{"first":"a longer context"}');
    const outside = join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep'), 'kept');
    mkdirSync(join(first.workDir, 'deep', 'er'), { recursive: true });
    writeFileSync(join(first.workDir, 'deep', 'er', 'file'), 'x');
    symlinkSync(outside, join(first.workDir, 'link'));
    writeFileSync(join(first.tmpDir, 'scratch'), 'x');
    writeFileSync(join(first.dir, 'step-1.sh'), 'echo left behind');
    // A process of another task holding the context file and the working directory open, which
    // reads and writes there once the next attempt has the slot.
    const holder = spawn(
      'sh',
      ['-c', 'exec 3<"$0"; read go; cat <&3; touch late 2>/dev/null; exit 0', first.contextPath],
      {
        cwd: first.workDir,
        stdio: ['pipe', 'pipe', 'ignore'],
      },
    );
    let held = '';
    holder.stdout.on('data', (chunk: Buffer) => {
      held += chunk.toString();
    });
    await waitFor(
      async () => existsSync(`/proc/${holder.pid}/fd/3`),
      (open) => open,
    );

    await giveBackSwept(attempts, first);
    const second = attempts.take('{"second":2}');
    holder.stdin.end('go\n');
    await once(holder, 'exit');

    expect(second).toEqual(first);
    expect(readdirSync(second.dir).sort()).toEqual(['context.json', 'tmp', 'work']);
    expect(readdirSync(second.workDir)).toEqual([]);
    expect(readdirSync(second.tmpDir)).toEqual([]);
    expect([modeOf(second.workDir), modeOf(second.tmpDir), modeOf(second.contextPath)]).toEqual([
      0o700, 0o700, 0o600,
    ]);
    expect(readFileSync(second.contextPath, 'utf8')).toBe('{"second":2}');
    expect(held).toBe('{"first":"a longer context"}');
    expect(readFileSync(join(outside, 'keep'), 'utf8')).toBe('kept');
    await attempts.close();
  });

  it('does not reuse a slot before its task user is swept, and removes it at close', async () => {
    const attempts = createAttemptDirectories(spawner, workRoot, true, 4);
    const first = attempts.take('{}');
    writeFileSync(join(first.workDir, 'still'), 'here');
    attempts.giveBack(first, never);
    expect(attempts.take('{}').dir).not.toBe(first.dir);
    expect(readFileSync(join(first.workDir, 'still'), 'utf8')).toBe('here');
    await attempts.close();
    expect(existsSync(first.dir)).toBe(false);
  });

  it('removes a slot whole without task users, after a container, and past the idle limit', async () => {
    const withoutUsers = createAttemptDirectories(spawner, workRoot, false, 4);
    const first = withoutUsers.take('{}');
    expect(modeOf(first.dir)).toBe(0o700);
    writeFileSync(join(first.workDir, 'left'), 'x');
    withoutUsers.giveBack(first, Promise.resolve());
    await withoutUsers.settled();
    expect(existsSync(first.dir)).toBe(false);

    const attempts = createAttemptDirectories(spawner, workRoot, true, 1);
    const container = attempts.take('{}');
    attempts.giveBack(container);
    await attempts.settled();
    expect(existsSync(container.dir)).toBe(false);
    const [a, b] = [attempts.take('{}'), attempts.take('{}')];
    await giveBackSwept(attempts, a);
    await giveBackSwept(attempts, b);
    expect(readdirSync(workRoot)).toEqual([b.dir.slice(workRoot.length + 1)]);
    await attempts.close();
    expect(readdirSync(workRoot)).toEqual([]);
  });
});
