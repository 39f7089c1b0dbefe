// Runs `npm ci` when node_modules may not hold what package-lock.json says: on a fresh clone,
// after the lock changed (a pull, a checkout) or after a change of Node's ABI (better-sqlite3
// is compiled for one). Otherwise it does nothing, in a few milliseconds. Plain Node with no
// dependencies: it runs before `npm ci`.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const lockFile = new URL('package-lock.json', root);
const modulesDir = new URL('node_modules/', root);
// What the installed tree was made from: the lock's hash and Node's ABI. It lives in
// node_modules, which `npm ci` deletes first, so an install that failed is made again.
const stampFile = new URL('.pipewright-install-stamp', modulesDir);
// npm's own record of the tree it installed, written at the end of every install.
const npmRecord = new URL('.package-lock.json', modulesDir);

if (!existsSync(lockFile)) fail(`no package-lock.json in ${fileURLToPath(root)}`);
const current = {
  lock_sha256: createHash('sha256').update(readFileSync(lockFile)).digest('hex'),
  node_abi: process.versions.modules,
};
const stamp = readStamp();
// Without a stamp the tree was installed by hand: its Node is taken to be this one.
const sameNode = stamp === undefined || stamp.node_abi === current.node_abi;
// The same lock, or one npm installed after it was written (`npm install PACKAGE` by hand).
const sameLock = stamp?.lock_sha256 === current.lock_sha256 || installedSinceTheLockChanged();

if (existsSync(modulesDir) && sameNode && sameLock) {
  if (stamp?.lock_sha256 !== current.lock_sha256) writeStamp();
  process.exit(0);
}
const reason = !existsSync(modulesDir)
  ? 'none are installed yet'
  : !sameNode
    ? `Node's ABI changed from ${stamp?.node_abi} to ${current.node_abi}`
    : 'package-lock.json changed since they were installed';
warn(`installing the npm packages (${reason}): npm ci`);
const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], {
  cwd: fileURLToPath(root),
  stdio: 'inherit',
});
if (result.status !== 0) {
  // Whatever npm left is not adopted by the next run, which installs again.
  rmSync(npmRecord, { force: true });
  fail('`npm ci` failed (its output is above)');
}
writeStamp();

function readStamp() {
  try {
    return JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return undefined;
  }
}

function writeStamp() {
  writeFileSync(stampFile, `${JSON.stringify(current)}\n`);
}

/** Whether npm wrote its record of the tree after package-lock.json was last written. */
function installedSinceTheLockChanged() {
  return existsSync(npmRecord) && statSync(npmRecord).mtimeMs >= statSync(lockFile).mtimeMs;
}

function warn(message) {
  process.stderr.write(`ensure-npm-packages: ${message}\n`);
}

function fail(message) {
  warn(message);
  process.exit(1);
}
