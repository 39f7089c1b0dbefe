// npm run bench [-- [--quick] [--database sqlite|postgres] [name...]]: runs the benchmarks (all by
// default), each against its bare baseline in the same run, prints the medians and ratios, and
// writes them to bench/results.json. Names: http events latency scheduler install pagination memory
// purge stall streams follow dashboard container postgres instances. With `--database postgres`
// (issue #26), every server the benchmarks start runs on a PostgreSQL database of its own, in one
// throwaway cluster for the run (`postgres`, which chooses its databases itself, is skipped,
// saying why), and the results go to bench/results-postgres.json.
import { rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { containerStart } from './benchmarks/container.js';
import { dashboard } from './benchmarks/dashboard.js';
import { deepPagination } from './benchmarks/deep-pagination.js';
import { eventIngestion } from './benchmarks/event-ingestion.js';
import { executeLatency } from './benchmarks/execute-latency.js';
import { follow } from './benchmarks/follow.js';
import { httpOverhead } from './benchmarks/http-overhead.js';
import { instances } from './benchmarks/instances.js';
import { memory } from './benchmarks/memory.js';
import { postgres } from './benchmarks/postgres.js';
import { purge } from './benchmarks/purge.js';
import { resourceInstall } from './benchmarks/resource-install.js';
import { schedulerOverhead } from './benchmarks/scheduler-overhead.js';
import { streams } from './benchmarks/streams.js';
import { tenantStall } from './benchmarks/tenant-stall.js';
import { type BigData, startWithBigData } from './lib/big-data.js';
import { type Context, createContext, type Row } from './lib/context.js';
import { DATABASE_KINDS, type DatabaseKind, type Databases, startDatabases } from './lib/database.js';
import { useDatabases } from './lib/pipewright.js';

type Benchmark = (context: Context, big: () => Promise<BigData>) => Promise<Row[]>;

const BENCHMARKS: Record<string, Benchmark> = {
  http: (context) => httpOverhead(context),
  events: (context) => eventIngestion(context),
  latency: (context) => executeLatency(context),
  scheduler: (context) => schedulerOverhead(context),
  install: (context) => resourceInstall(context),
  pagination: async (context, big) => deepPagination(context, await big()),
  memory: async (context, big) => memory(context, await big()),
  purge: (context) => purge(context),
  stall: (context) => tenantStall(context),
  dashboard: async (context, big) => dashboard(context, await big()),
  streams: (context) => streams(context),
  follow: (context) => follow(context),
  container: (context) => containerStart(context),
  postgres: (context) => postgres(context),
  instances: (context) => instances(context),
};

/** The benchmarks `--database postgres` skips, and why: they choose their databases themselves. */
const SQLITE_ONLY: Record<string, string> = {
  postgres: 'it runs the server on SQLite and on PostgreSQL side by side itself: run it without --database',
};

/** `--database KIND` of the arguments (SQLite without it), and the arguments without it. */
function databaseOption(args: string[]): { kind: DatabaseKind; rest: string[] } {
  const at = args.findIndex((a) => a === '--database' || a.startsWith('--database='));
  if (at < 0) return { kind: 'sqlite', rest: args };
  const inline = (args[at] as string).startsWith('--database=');
  const value = inline ? (args[at] as string).slice('--database='.length) : args[at + 1];
  if (!DATABASE_KINDS.includes(value as DatabaseKind))
    throw new Error(`--database wants one of ${DATABASE_KINDS.join(', ')}, not ${value ?? 'nothing'}`);
  return { kind: value as DatabaseKind, rest: args.filter((_, i) => i !== at && (inline || i !== at + 1)) };
}

function format(value: number | undefined, unit: string): string {
  if (value === undefined) return '';
  const digits = unit === 'ms' && value < 100 ? 2 : value < 10 ? 2 : 0;
  return value.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function table(rows: Row[]): string {
  const header = ['benchmark', 'metric', 'ours', 'baseline', 'ratio', 'unit', 'goal', 'met'];
  const lines = rows.map((r) => [
    r.benchmark,
    r.metric,
    format(r.ours, r.unit),
    r.baseline === undefined ? '' : `${format(r.baseline, r.unit)} (${r.baselineName})`,
    r.ratio === undefined ? '' : `${r.ratio < 0.1 ? r.ratio.toPrecision(2) : r.ratio.toFixed(2)}x`,
    r.unit,
    r.goal ?? '',
    r.met === undefined ? '' : r.met ? 'yes' : 'NO',
  ]);
  return [header, ...lines]
    .map((cells) => `| ${cells.join(' | ')} |`)
    .join('\n')
    .replace(/\n/, `\n|${header.map(() => '---').join('|')}|\n`);
}

async function main() {
  const { kind: database, rest: args } = databaseOption(process.argv.slice(2));
  const quick = args.includes('--quick');
  const names = args.filter((a) => !a.startsWith('--'));
  const unknown = names.filter((name) => !(name in BENCHMARKS));
  if (unknown.length > 0)
    throw new Error(`unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(' ')}`);
  const context = createContext(quick);
  let big: Promise<BigData> | undefined;
  let databases: Databases | undefined;
  const rows: Row[] = [];
  const skipped: { benchmark: string; reason: string }[] = [];
  try {
    databases = await startDatabases(database);
    useDatabases(databases);
    for (const name of names.length > 0 ? names : Object.keys(BENCHMARKS)) {
      const reason = database === 'postgres' ? SQLITE_ONLY[name] : undefined;
      if (reason !== undefined) {
        process.stderr.write(`${name}: skipped on PostgreSQL: ${reason}\n`);
        skipped.push({ benchmark: name, reason });
        continue;
      }
      process.stderr.write(`${name}\n`);
      rows.push(
        ...(await (BENCHMARKS[name] as Benchmark)(context, () => (big ??= startWithBigData(context)))),
      );
    }
  } finally {
    if (big) await (await big).server.stop();
    useDatabases(undefined);
    await databases?.stop();
    rmSync(context.root, { recursive: true, force: true });
  }
  const machine = `${availableParallelism()} CPUs (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const skips = skipped.map((skip) => `skipped on PostgreSQL: ${skip.benchmark}, ${skip.reason}\n`).join('');
  process.stdout.write(`\n${machine}, database: ${database}\n\n${table(rows)}\n${skips ? `\n${skips}` : ''}`);
  // A run on PostgreSQL has a file of its own: SQLite's results stay beside it.
  const file = database === 'sqlite' ? '../results.json' : `../results-${database}.json`;
  writeFileSync(
    new URL(file, import.meta.url),
    `${JSON.stringify({ machine, date: new Date().toISOString(), quick, database, rows, skipped }, null, 2)}\n`,
  );
  if (rows.some((row) => row.met === false)) process.exitCode = 1;
}

await main();
