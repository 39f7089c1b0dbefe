import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: Debian's `postgresql` package,
 * a data directory in a temp directory, listening on a Unix socket there only (no TCP port),
 * without fsync. As root it runs as the `postgres` user, since PostgreSQL refuses root.
 */
export interface PostgresCluster extends DatabaseAdmin {
  /** Stops the server as an operator would (fast: connections are ended), keeping its data. */
  down(): void;
  /** Starts the server again after `down`. */
  up(): void;
  /** Stops the server at once and removes its directory. */
  stop(): void;
}

/** Makes and drops databases of a cluster, through its `postgres` database at `adminUrl`. */
export interface DatabaseAdmin {
  /** The URL of database `name` of the cluster. */
  url(name: string): string;
  /** Creates database `name`, a copy of `template` when given; returns its URL. */
  createDatabase(name: string, template?: string): Promise<string>;
  /** Drops database `name`, ending its connections. */
  dropDatabase(name: string): Promise<void>;
  /** Closes its connections. */
  end(): Promise<void>;
}

export function databaseAdmin(adminUrl: string): DatabaseAdmin {
  const admin = new pg.Pool({ connectionString: adminUrl, max: 2 });
  admin.on('error', () => {});
  const identifier = (name: string) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
    return name;
  };
  const url = (name: string) => {
    const of = new URL(adminUrl);
    of.pathname = `/${identifier(name)}`;
    return of.toString();
  };
  return {
    url,
    async createDatabase(name, template) {
      await admin.query(
        `CREATE DATABASE ${identifier(name)}${template ? ` TEMPLATE ${identifier(template)}` : ''}`,
      );
      return url(name);
    },
    async dropDatabase(name) {
      await admin.query(`DROP DATABASE IF EXISTS ${identifier(name)} WITH (FORCE)`);
    },
    end: () => admin.end(),
  };
}

/** The directory of PostgreSQL's programs: Debian's newest version, or those on the PATH. */
function binaries(): string {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((name) => existsSync(join(root, name, 'bin', 'pg_ctl')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(root, versions[0], 'bin');
  }
  const found = spawnSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' });
  if (found.status === 0) return join(found.stdout.trim(), '..');
  throw new Error(
    'PostgreSQL is not installed: `apt-get install postgresql` (scripts/system-packages/test.txt)',
  );
}

/**
 * Runs a program of PostgreSQL's, as the `postgres` user when this process is root, in `cwd`
 * (the cluster's directory: the caller's may be closed to that user).
 */
function runAsOwner(program: string, args: string[], cwd: string): void {
  const asRoot = process.getuid?.() === 0;
  const [command, commandArgs] = asRoot
    ? ['runuser', ['-u', 'postgres', '--', program, ...args]]
    : [program, args];
  execFileSync(command, commandArgs, { stdio: ['ignore', 'pipe', 'pipe'], cwd });
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = binaries();
  const dir = mkdtempSync(join(tmpdir(), 'pipewright-pg-'));
  if (process.getuid?.() === 0) {
    const owner = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
    const group = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
    chownSync(dir, Number(owner), Number(group));
  }
  const data = join(dir, 'data');
  runAsOwner(
    join(bin, 'initdb'),
    ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-locale', '-E', 'UTF8'],
    dir,
  );
  const settings = [
    `-k ${dir}`,
    "-c listen_addresses=''",
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=400',
  ];
  const pgCtl = (...args: string[]) => runAsOwner(join(bin, 'pg_ctl'), ['-D', data, ...args], dir);
  const up = () => pgCtl('-o', settings.join(' '), '-l', join(dir, 'log'), '-w', 'start');
  up();
  const admin = databaseAdmin(`postgresql://postgres@localhost/postgres?host=${encodeURIComponent(dir)}`);
  return {
    ...admin,
    down: () => pgCtl('-m', 'fast', '-w', 'stop'),
    up,
    stop() {
      void admin.end();
      try {
        pgCtl('-m', 'immediate', 'stop');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
