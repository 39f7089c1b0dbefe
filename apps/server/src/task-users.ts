import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ExclusiveLock,
  type Logger,
  takeExclusiveLock,
  taskUsersProblem,
  type UidRange,
} from '@pipewright/server';
import { DEFAULT_TASK_USERS, type ServeConfig } from './config.js';
import { StartupError } from './data-dir.js';

/** Default ranges tried in turn when the first is taken by another server of this host. */
const DEFAULT_RANGES_TRIED = 100;

/**
 * Where servers of this host claim their ranges. A range must be one server's alone: each
 * server kills, when a task ends and at start, every process of its range it does not run.
 */
const CLAIMS_DIR = existsSync('/run') ? '/run/pipewright' : join(tmpdir(), 'pipewright');

export interface ChosenTaskUsers {
  range: UidRange;
  claim: ExclusiveLock;
}

/**
 * The users tasks run as: the range asked for, which must work here and be free; by default
 * the first free default range when task users work here, else none (tasks then run as the
 * server's user, which is logged).
 */
export function chooseTaskUsers(config: ServeConfig, logger: Logger): ChosenTaskUsers | undefined {
  if (config.taskUsers === 'off') return undefined;
  const asked = config.taskUsers === 'auto' ? undefined : config.taskUsers;
  const problem = taskUsersProblem(asked ?? DEFAULT_TASK_USERS);
  if (problem !== undefined) {
    if (asked) throw new StartupError(`--task-users cannot work: ${problem}`);
    logger.warn("tasks run as the server's own user, and can read its data directory", { reason: problem });
    return undefined;
  }
  const size = DEFAULT_TASK_USERS.last - DEFAULT_TASK_USERS.first + 1;
  const candidates = asked
    ? [asked]
    : Array.from({ length: DEFAULT_RANGES_TRIED }, (_, k) => ({
        first: DEFAULT_TASK_USERS.first + k * size,
        last: DEFAULT_TASK_USERS.last + k * size,
      }));
  for (const range of candidates) {
    // The last user of a range is the reaper's own (runner/reaper.ts).
    if (range.last - range.first < 2 * config.maxRunningTasks) {
      throw new StartupError('--task-users must hold at least twice --max-running-tasks users, and one more');
    }
    const claim = claimRange(range);
    if (!claim) continue;
    logger.info('tasks run as users of their own', { first_uid: range.first, last_uid: range.last });
    return { range, claim };
  }
  throw new StartupError(
    asked
      ? `another pipewright-server of this host uses task users ${asked.first}-${asked.last}`
      : 'every default range of task users is used by another pipewright-server of this host',
  );
}

function claimRange(range: UidRange): ExclusiveLock | undefined {
  mkdirSync(CLAIMS_DIR, { recursive: true, mode: 0o700 });
  return takeExclusiveLock(join(CLAIMS_DIR, `task-users-${range.first}-${range.last}.lock`));
}
