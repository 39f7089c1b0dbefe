import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Logger } from '@pipewright/server';
import { enterableByOthers } from './data-dir.js';
import { shellWord } from './shell-word.js';

/**
 * Gives tasks the server's own `pipewright`: a directory of the work root, to be put first on
 * their PATH, holding the CLI's bundle (one file, its dependencies inlined) and a launcher that
 * runs it with the node running the server. Made anew at each start from this server's build,
 * so tasks get the CLI of the server they talk to, wherever the checkout is: everyone may read
 * and run it (tasks may run as users of their own, and a checkout under /root is out of their
 * reach), only the server's user may change it. Returns the directory, or undefined (logged)
 * when the CLI is not built.
 */
export function placeTaskCli(workRoot: string, forTaskUsers: boolean, logger: Logger): string | undefined {
  let bundle: string;
  try {
    bundle = createRequire(import.meta.url).resolve('pipewright/bundle');
  } catch {
    logger.warn('steps cannot call pipewright: the CLI is not built (npm run build)');
    return undefined;
  }
  const dir = join(workRoot, 'bin');
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
  const program = join(dir, 'pipewright.mjs');
  copyFileSync(bundle, program);
  chmodSync(program, 0o644);
  const launcher = join(dir, 'pipewright');
  writeFileSync(launcher, `#!/bin/sh\nexec ${shellWord(process.execPath)} ${shellWord(program)} "$@"\n`);
  chmodSync(launcher, 0o755);
  if (forTaskUsers && !enterableByOthers(process.execPath)) {
    logger.warn('steps cannot call pipewright: task users cannot run node where it is', {
      node: process.execPath,
    });
  }
  return dir;
}
