// Installs the Debian packages of the named lists (scripts/system-packages/NAME.txt) that are
// missing: `node scripts/ensure-system-packages.mjs build test`. It asks dpkg first, in one
// call, so that a machine which has them all never runs apt. Without root or apt-get it says
// what is missing and how to install it, and fails. Plain Node with no dependencies: it runs
// before `npm ci`.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const lists = process.argv.slice(2);
if (lists.length === 0) fail('usage: node scripts/ensure-system-packages.mjs LIST...');
const wanted = [...new Set(lists.flatMap(readList))];

if (!onPath('dpkg-query')) {
  // Not Debian: the packages may have other names here; what is truly missing fails later, by name.
  warn(`cannot check for the Debian packages ${wanted.join(' ')} (no dpkg-query): install their equivalents`);
  process.exit(0);
}
const missing = missingPackages(wanted);
if (missing.length === 0) process.exit(0);

const install = ['install', '-y', '--no-install-recommends', ...missing];
const howTo = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`;
if (process.getuid?.() !== 0 || !onPath('apt-get')) {
  const why = onPath('apt-get') ? 'not root' : 'no apt-get';
  fail(
    `missing Debian packages: ${missing.join(' ')}\nCannot install them here (${why}). As root, run:\n  ${howTo}`,
  );
}
warn(`installing the missing Debian packages: ${missing.join(' ')}`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
for (const args of [['update'], install]) {
  const result = spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env });
  if (result.status !== 0) fail(`\`apt-get ${args.join(' ')}\` failed; to install by hand:\n  ${howTo}`);
}
const stillMissing = missingPackages(missing);
if (stillMissing.length > 0) fail(`apt-get did not install: ${stillMissing.join(' ')}`);

/** The package names of a list: one a line, `#` comments and blank lines skipped. */
function readList(name) {
  const file = new URL(`system-packages/${name}.txt`, import.meta.url);
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    fail(`no package list ${name}: scripts/system-packages/${name}.txt does not exist`);
  }
  return text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean);
}

/** The packages dpkg does not report fully installed ("ii"); unknown ones it names on stderr. */
function missingPackages(packages) {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format syntax
  const format = '-f=${Package}\\t${db:Status-Abbrev}\\n';
  const result = spawnSync('dpkg-query', ['-W', format, ...packages], { encoding: 'utf8' });
  const installed = new Set(
    result.stdout
      .split('\n')
      .map((line) => line.split('\t'))
      .filter(([, status]) => status?.startsWith('ii'))
      .map(([name]) => name),
  );
  return packages.filter((name) => !installed.has(name));
}

function onPath(command) {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir || '.', command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function warn(message) {
  process.stderr.write(`ensure-system-packages: ${message}\n`);
}

function fail(message) {
  warn(message);
  process.exit(1);
}
