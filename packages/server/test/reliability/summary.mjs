// `npm run reliability` (from the repository's root, after a build): runs the reliability
// suite, the tests of packages/server/test/reliability and apps/server/test/faults.test.ts,
// shows their output, and sums up the figures each test printed on its
// `reliability figures {...}` line. Exits non-zero when a test failed, a 5xx was seen or a
// write was lost.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const RUNS = [
  { cwd: 'packages/server', args: ['vitest', 'run', 'test/reliability'] },
  { cwd: 'apps/server', args: ['vitest', 'run', 'test/faults.test.ts'] },
];
const FIGURES = /reliability figures (\{.*\})/;
// Terminal colours and styles, which vitest puts around lines of output.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character is the point
const STYLES = /\u001b\[[0-9;]*m/g;

/** Runs one vitest invocation, echoing its output; resolves to its exit code and figures. */
function run({ cwd, args }) {
  return new Promise((resolve) => {
    const child = spawn('npx', args, { cwd: join(root, cwd), stdio: ['ignore', 'pipe', 'inherit'] });
    const figures = [];
    let pending = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const match = FIGURES.exec(line.replace(STYLES, ''));
        if (match) figures.push(JSON.parse(match[1]));
      }
    });
    child.on('close', (code) => resolve({ code: code ?? 1, figures }));
  });
}

const results = [];
for (const spec of RUNS) results.push(await run(spec));
const figures = results.flatMap((r) => r.figures);
const sum = (name) => figures.reduce((total, f) => total + (f[name] ?? 0), 0);

process.stdout.write('\nReliability figures\n');
for (const { area, ...rest } of figures) {
  const details = Object.entries(rest)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');
  process.stdout.write(`  ${area.padEnd(26)} ${details}\n`);
}
const load = figures.find((f) => f.area === 'load');
const held = load
  ? `${load.clients} clients for ${load.seconds} s, ${load.requests} requests, ${load.errors} errors, ` +
    `RSS ${load.rssGrowthMiB >= 0 ? '+' : ''}${load.rssGrowthMiB} MiB after warm-up`
  : 'not measured';
const failed = results.some((r) => r.code !== 0);
process.stdout.write(
  `\nreliability: ${sum('requests')} requests tried, ${sum('failures5xx')} 5xx seen, ` +
    `${sum('writesLost')} writes lost, load held: ${held}${failed ? ' -- SOME TESTS FAILED' : ''}\n`,
);
process.exit(failed || sum('failures5xx') > 0 || sum('writesLost') > 0 ? 1 : 0);
