import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export interface TempDirOptions {
  /** Open to everyone (0777): tasks running as users of their own write there. */
  forTasks?: boolean;
}

/**
 * Makes temp directories named from a prefix, all removed once the calling test file has run.
 * Call it at the top of a test file.
 */
export function tempDirs(options: TempDirOptions = {}): (prefix: string) => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return (prefix) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    if (options.forTasks) chmodSync(dir, 0o777);
    dirs.push(dir);
    return dir;
  };
}
