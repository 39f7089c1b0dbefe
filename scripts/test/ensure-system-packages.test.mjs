import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// The script runs from a copy of its own with package lists made up here, and with stubs of
// dpkg-query and apt-get first on PATH: dpkg-query reports the packages of a file as
// installed and those of another as removed (their configuration kept), apt-get records its
// calls and "installs" into the first file. Installing needs root:
// those tests run where the suite runs as root (CI); the others run as an ordinary user.

const SCRIPT = new URL('../ensure-system-packages.mjs', import.meta.url);
const STUB_DPKG_QUERY = `#!/bin/sh
shift 2
status=0
for p in "$@"; do
  if grep -qx "$p" "$STUB_DIR/installed"; then printf '%s\\tii \\n' "$p"
  elif grep -qx "$p" "$STUB_DIR/removed"; then printf '%s\\trc \\n' "$p"
  else echo "dpkg-query: no packages found matching $p" >&2; status=1; fi
done
exit $status
`;
const STUB_APT_GET = `#!/bin/sh
echo "$*" >> "$STUB_DIR/apt-calls"
if [ "$1" = install ] && [ -z "$STUB_APT_INSTALLS_NOTHING" ]; then
  for p in "$@"; do case "$p" in install|-*) ;; *) echo "$p" >> "$STUB_DIR/installed" ;; esac; done
fi
exit "\${STUB_APT_EXIT:-0}"
`;
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

let root;
let bin;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'ensure-system packages '));
  bin = join(root, 'bin');
  mkdirSync(join(root, 'scripts/system-packages'), { recursive: true });
  mkdirSync(bin);
  copyFileSync(SCRIPT, join(root, 'scripts/ensure-system-packages.mjs'));
  writeFileSync(join(root, 'scripts/system-packages/build.txt'), '# compilers\ngcc\nmake  # and make\n\n');
  writeFileSync(join(root, 'scripts/system-packages/test.txt'), 'chromium\nmake\n');
  writeFileSync(join(root, 'installed'), 'gcc\n');
  writeFileSync(join(root, 'removed'), 'chromium\n');
  // An ordinary user runs the script too: the tree is theirs to read, its files to write.
  chmodSync(root, 0o777);
  writeFileSync(join(root, 'apt-calls'), '', { mode: 0o666 });
  chmodSync(join(root, 'installed'), 0o666);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function stub(name, text) {
  writeFileSync(join(bin, name), text);
  chmodSync(join(bin, name), 0o755);
}

/** Runs the script with the stubs named first on PATH (or PATH as given), as root or not. */
function ensure(lists, { stubs = ['dpkg-query', 'apt-get'], path, asRoot = isRoot, env = {} } = {}) {
  if (stubs.includes('dpkg-query')) stub('dpkg-query', STUB_DPKG_QUERY);
  if (stubs.includes('apt-get')) stub('apt-get', STUB_APT_GET);
  return spawnSync(process.execPath, [join(root, 'scripts/ensure-system-packages.mjs'), ...lists], {
    cwd: root,
    env: { ...process.env, PATH: path ?? `${bin}:${process.env.PATH}`, STUB_DIR: root, ...env },
    encoding: 'utf8',
    ...(isRoot && !asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
  });
}

function aptCalls() {
  return readFileSync(join(root, 'apt-calls'), 'utf8').trim().split('\n').filter(Boolean);
}

describe('ensure-system-packages', () => {
  it('does nothing, apt-get included, when every package is installed', () => {
    writeFileSync(join(root, 'installed'), 'gcc\nmake\n');
    const result = ensure(['build']);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
    expect(aptCalls()).toEqual([]);
  });

  it.skipIf(!isRoot)('as root, installs the missing packages of every list, once each', () => {
    const result = ensure(['build', 'test']);
    expect(result.status).toBe(0);
    expect(result.stderr).toContain('installing the missing Debian packages: make chromium');
    expect(aptCalls()).toEqual(['update', 'install -y --no-install-recommends make chromium']);
    expect(ensure(['build', 'test']).status).toBe(0);
    expect(aptCalls()).toHaveLength(2);
  });

  it.skipIf(!isRoot)('as root, fails clearly when apt-get fails', () => {
    const result = ensure(['test'], { env: { STUB_APT_EXIT: '100' } });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('`apt-get update` failed; to install by hand:');
    expect(result.stderr).toContain('apt-get install -y --no-install-recommends chromium make');
  });

  it.skipIf(!isRoot)('as root, fails when apt-get succeeds without installing a package', () => {
    const result = ensure(['test'], { env: { STUB_APT_INSTALLS_NOTHING: '1' } });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('apt-get did not install: chromium make');
  });

  it('not as root, names the missing packages and the command that installs them', () => {
    const result = ensure(['build', 'test'], { asRoot: false });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('missing Debian packages: make chromium');
    expect(result.stderr).toContain('(not root)');
    expect(result.stderr).toContain(
      'apt-get update && apt-get install -y --no-install-recommends make chromium',
    );
    expect(aptCalls()).toEqual([]);
  });

  it('without apt-get, says so', () => {
    const result = ensure(['test'], { stubs: ['dpkg-query'], path: bin });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('missing Debian packages: chromium make');
    expect(result.stderr).toContain('(no apt-get)');
  });

  it('without dpkg-query (not Debian), warns and goes on', () => {
    const result = ensure(['test'], { stubs: ['apt-get'], path: bin });
    expect(result.status).toBe(0);
    expect(result.stderr).toContain('cannot check for the Debian packages chromium make (no dpkg-query)');
    expect(aptCalls()).toEqual([]);
  });

  it('fails on a list that does not exist', () => {
    const result = ensure(['tests']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('scripts/system-packages/tests.txt does not exist');
  });

  it.skipIf(!existsSync('/usr/bin/dpkg-query'))('reads what the real dpkg-query reports', () => {
    writeFileSync(join(root, 'scripts/system-packages/test.txt'), 'dpkg\npipewright-no-such-package\n');
    const result = ensure(['test'], { stubs: [], asRoot: false });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('missing Debian packages: pipewright-no-such-package\n');
  });
});
