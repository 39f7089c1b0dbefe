import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UidRange } from '../../src/runner/index.js';
import { type ExclusiveLock, takeExclusiveLock } from '../../src/store/index.js';

/** Where servers of this host claim their ranges of task users (apps/server/src/task-users.ts). */
const CLAIMS_DIR = existsSync('/run') ? '/run/pipewright' : join(tmpdir(), 'pipewright');

/** Ranges tried in turn, `stride` users apart, before giving up. */
const RANGES_TRIED = 50;

/**
 * A range of `size` users from `base` that is this test file's alone until it releases it:
 * test suites running beside each other (two clones' `npm test`) would otherwise give their
 * servers the same users, and each kills every process of its range it does not run. Claimed
 * the way servers claim theirs: a lock the system releases when the test process ends.
 */
export function claimUidRange(
  base: number,
  size: number,
  stride = 1000,
): { range: UidRange; lock: ExclusiveLock } {
  mkdirSync(CLAIMS_DIR, { recursive: true, mode: 0o700 });
  for (let k = 0; k < RANGES_TRIED; k++) {
    const first = base + k * stride;
    const lock = takeExclusiveLock(join(CLAIMS_DIR, `test-users-${first}.lock`));
    if (lock) return { range: { first, last: first + size - 1 }, lock };
  }
  throw new Error(`every range of ${size} test users from ${base} is taken by another test run`);
}
