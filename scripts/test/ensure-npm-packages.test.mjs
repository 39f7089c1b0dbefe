import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// The script runs in a checkout of its own (a copy of it next to a package-lock.json), with a
// stub npm first on PATH that records its calls and, for `ci`, installs a tree as npm does:
// node_modules afresh, with npm's record written last.

const SCRIPT = new URL('../ensure-npm-packages.mjs', import.meta.url);
const STUB_NPM = `#!/bin/sh
echo "$*" >> "$STUB_CALLS"
[ "$1" = ci ] || exit 0
rm -rf node_modules && mkdir node_modules && echo '{}' > node_modules/.package-lock.json
exit "\${STUB_NPM_EXIT:-0}"
`;

let root;
let calls;
let env;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ensure-npm packages '));
  mkdirSync(join(root, 'scripts'));
  mkdirSync(join(root, 'bin'));
  copyFileSync(SCRIPT, join(root, 'scripts/ensure-npm-packages.mjs'));
  writeFileSync(join(root, 'bin/npm'), STUB_NPM);
  chmodSync(join(root, 'bin/npm'), 0o755);
  writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion": 3, "version": 1}\n');
  calls = join(root, 'npm-calls');
  env = { ...process.env, PATH: `${join(root, 'bin')}:${process.env.PATH}`, STUB_CALLS: calls };
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function ensure(extraEnv = {}) {
  return spawnSync(process.execPath, [join(root, 'scripts/ensure-npm-packages.mjs')], {
    cwd: root,
    env: { ...env, ...extraEnv },
    encoding: 'utf8',
  });
}

function npmCalls() {
  return existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : [];
}

/** Dates npm's record of the tree a minute back, as if the lock had changed after the install. */
function ageTheInstall() {
  const aMinuteAgo = new Date(Date.now() - 60_000);
  utimesSync(join(root, 'node_modules/.package-lock.json'), aMinuteAgo, aMinuteAgo);
}

function installByHand() {
  mkdirSync(join(root, 'node_modules'));
  writeFileSync(join(root, 'node_modules/.package-lock.json'), '{}\n');
}

describe('ensure-npm-packages', () => {
  it('installs a fresh checkout once, then does nothing', () => {
    const first = ensure();
    expect(first.status).toBe(0);
    expect(first.stderr).toContain('none are installed yet');
    expect(ensure().status).toBe(0);
    expect(npmCalls()).toEqual(['ci --no-audit --no-fund']);
  });

  it('installs again when the lock changed', () => {
    ensure();
    ageTheInstall();
    writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion": 3, "version": 2}\n');
    const second = ensure();
    expect(second.status).toBe(0);
    expect(second.stderr).toContain('package-lock.json changed');
    expect(npmCalls()).toHaveLength(2);
  });

  it('does not install again when the lock was rewritten with the same content', () => {
    ensure();
    ageTheInstall();
    writeFileSync(join(root, 'package-lock.json'), readFileSync(join(root, 'package-lock.json')));
    expect(ensure().status).toBe(0);
    expect(npmCalls()).toHaveLength(1);
  });

  it('installs again when the stamp is of another Node ABI', () => {
    ensure();
    const stampFile = join(root, 'node_modules/.pipewright-install-stamp');
    const stamp = JSON.parse(readFileSync(stampFile, 'utf8'));
    writeFileSync(stampFile, JSON.stringify({ ...stamp, node_abi: '1' }));
    const second = ensure();
    expect(second.stderr).toContain("Node's ABI changed from 1");
    expect(npmCalls()).toHaveLength(2);
  });

  it('adopts a tree npm installed by hand after the lock last changed', () => {
    installByHand();
    expect(ensure().status).toBe(0);
    expect(npmCalls()).toEqual([]);
    expect(existsSync(join(root, 'node_modules/.pipewright-install-stamp'))).toBe(true);
  });

  it('adopts a package added by hand (`npm install PACKAGE` writes the lock, then its record)', () => {
    ensure();
    writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion": 3, "version": 2}\n');
    writeFileSync(join(root, 'node_modules/.package-lock.json'), '{}\n');
    expect(ensure().status).toBe(0);
    expect(npmCalls()).toHaveLength(1);
  });

  it('installs over a tree installed by hand before the lock changed', () => {
    installByHand();
    ageTheInstall();
    expect(ensure().status).toBe(0);
    expect(npmCalls()).toHaveLength(1);
  });

  it('fails when npm ci fails, and installs again on the next run', () => {
    const failed = ensure({ STUB_NPM_EXIT: '1' });
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('`npm ci` failed');
    expect(ensure().status).toBe(0);
    expect(npmCalls()).toHaveLength(2);
  });
});
