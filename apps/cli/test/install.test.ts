import { execFile } from 'node:child_process';
import { cpSync, existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDirs } from '@pipewright/testing';
import { describe, expect, it } from 'vitest';
import { CLI_BIN } from './helpers/cli.js';

const run = promisify(execFile);
const CHECKOUT = fileURLToPath(new URL('../../..', import.meta.url));

const tempDir = tempDirs();

/** npm, kept off the network and off the user's cache and global directory. */
function npm(args: string[], cwd: string, home: string) {
  return run('npm', [...args, '--offline', '--no-audit', '--no-fund', '--no-update-notifier'], {
    cwd,
    env: { ...process.env, npm_config_cache: join(home, 'npm-cache') },
    timeout: 120_000,
  });
}

describe('installing pipewright', () => {
  it('works from a packed tarball, `npm install -g`, outside the repository', async () => {
    const home = tempDir('pipewright-install-');
    const { stdout: packed } = await npm(
      ['pack', '-w', 'pipewright', '--json', '--pack-destination', home],
      CHECKOUT,
      home,
    );
    const [{ filename }] = JSON.parse(packed) as [{ filename: string }];
    const prefix = join(home, 'prefix');
    await npm(['install', '-g', '--prefix', prefix, join(home, filename)], home, home);

    // The bundle and its launcher: no dependency is installed, none is needed.
    const installed = join(prefix, 'lib', 'node_modules', 'pipewright');
    expect(existsSync(join(installed, 'node_modules'))).toBe(false);
    expect(readdirSync(join(installed, 'dist'))).toEqual(['pipewright.mjs']);
    const { stdout } = await run(join(prefix, 'bin', 'pipewright'), ['--help'], {
      cwd: home,
      env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: home },
      timeout: 120_000,
    });
    expect(stdout).toMatch(/^Usage: pipewright COMMAND/);
  });

  it('says what to run when the program is not built yet', async () => {
    // The launcher of a checkout without its dist/.
    const checkout = tempDir('pipewright-unbuilt-');
    cpSync(CLI_BIN, join(checkout, 'bin', 'pipewright.js'));
    const failed = await run(process.execPath, [join(checkout, 'bin', 'pipewright.js'), '--help']).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed).toMatchObject({
      code: 1,
      stderr: 'pipewright: the program is not built yet: run `npm run build` at the root of the repository\n',
    });
  });
});
