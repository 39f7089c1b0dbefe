import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPostgresCluster } from '@pipewright/testing/postgres';
import pg from 'pg';
import type { Context, Row } from '../lib/context.js';
import { BENCH_APPLICATION, postgresView } from '../lib/database.js';
import { INGEST_SPECS, ingest, perMinute, pipelineCounts } from '../lib/ingest.js';
import { loadAcross } from '../lib/load.js';
import {
  installProject,
  type Pipewright,
  projectPath,
  startPipewright,
  writeIdentityKey,
} from '../lib/pipewright.js';
import { COMMITS_CHANNEL, WRITE_LOCK } from '../lib/postgres-store.js';
import { mean } from '../lib/stats.js';

/** The most instances run at once. */
const MOST = 3;
/** Events sent to each new server alone, with its reads, before it is measured. */
const WARM_UP_EVENTS = 200;
/** Connections of the read load, in all, dealt round robin over the instances running. */
const READ_CONNECTIONS = 30;

/** What one phase (a number of instances running) measured. */
interface Phase {
  instances: number;
  readsPerSecond: number;
  pipelinesPerMinute: number;
  eventsPerSecond: number;
  /** Writing commits of every instance while the events ran, as their notifications tell. */
  commits: number;
  /** Writing commits of every instance while the reads ran. */
  readCommits: number;
  /** Most connections the servers held at once, reads and events. */
  peakConnections: number;
  /** While the events ran: the share of looks that found the write lock held. */
  lockHeld: number;
  /** While the events ran: how many connections waited for the write lock, on average. */
  lockWaiting: number;
  /** How long the write lock was held per writing commit, in ms: held share x time / commits. */
  lockMsPerCommit: number;
}

interface Observed<T> {
  result: T;
  peakConnections: number;
  lockHeld: number;
  lockWaiting: number;
}

/**
 * One, two and three instances of the server on one PostgreSQL database (issue #26; a throwaway
 * cluster, as `postgres`), in one run: `GET /v0/projects/id/{id}` requests per second and
 * pipelines completed per minute from custom events (the load of `postgres`: 8 in flight, one
 * trigger, a pipeline of one `true` task), both spread round robin over the instances running.
 * Phases go 1, 2, 3, 3, 2, 1 instances (1, 2, 3 with --quick), the instances started and stopped
 * between them, so that a machine that gets busier or a database that grows weighs on every
 * count alike; each count's figure is the mean of its phases, its ratio the mean of the rounds'
 * own ratios against one instance (above 1: slower than one instance).
 */
export async function instances(context: Context): Promise<Row[]> {
  const cluster = await startPostgresCluster();
  const running: Pipewright[] = [];
  const closing: (() => Promise<void>)[] = [];
  try {
    const database = await cluster.createDatabase('bench');
    const keyFile = await writeIdentityKey(join(context.dir('instances-key'), 'identity.key'));
    const args = ['--database', database, '--identity-key-file', keyFile];
    const dataDirs = Array.from({ length: MOST }, (_, i) => context.dir(`instances-${i + 1}`));

    // The first instance makes the schema, the organization and its first key; the others start
    // on that database, and use that key.
    const first = await startPipewright(dataDirs[0] as string, args);
    running.push(first);
    const path = await projectPath(first);
    await installProject(first, 'ingest', INGEST_SPECS);
    const headers = { authorization: `Bearer ${first.apiKey}` };
    const reads = (servers: Pipewright[], seconds: number, connections = READ_CONNECTIONS) =>
      loadAcross(
        servers.map((server) => `${server.baseUrl}${path}`),
        { headers, seconds, connections },
      );
    const counts = pipelineCounts(postgresView(database));
    closing.push(() => counts.close());
    // A new server compiles a route's validation at its first request, and V8 its hot code over
    // the first thousands: each new server gets reads and pipelines of its own first, unmeasured.
    const warm = async (server: Pipewright) => {
      await reads([server], 2, 10);
      await ingest([server.client()], counts, WARM_UP_EVENTS);
    };
    await warm(first);
    const scale = async (count: number) => {
      while (running.length > count) await running.pop()?.stop();
      while (running.length < count) {
        const server = await startPipewright(dataDirs[running.length] as string, args, {}, first.apiKey);
        running.push(server);
        await warm(server);
      }
    };

    // What the servers do to the database, seen from its side, by connections of the benchmark's.
    const observer = new pg.Pool({ connectionString: database, max: 1, application_name: BENCH_APPLICATION });
    closing.push(() => observer.end());
    const listener = new pg.Client({ connectionString: database, application_name: BENCH_APPLICATION });
    let commits = 0;
    listener.on('notification', () => {
      commits += 1;
    });
    await listener.connect();
    closing.push(() => listener.end());
    await listener.query(`LISTEN ${COMMITS_CHANNEL}`);
    // The servers' connections, and whether the write lock is held and how many wait for it.
    const look = async () => {
      const { rows } = await observer.query<{ connections: string; held: string; waiting: string }>(
        `SELECT (SELECT count(*) FROM pg_stat_activity
                  WHERE datname = current_database() AND application_name <> $1) AS connections,
                count(*) FILTER (WHERE granted) AS held, count(*) FILTER (WHERE NOT granted) AS waiting
           FROM pg_locks
          WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND classid = $2 AND objid = $3 AND objsubid = 1`,
        [BENCH_APPLICATION, Math.floor(WRITE_LOCK / 2 ** 32), WRITE_LOCK % 2 ** 32],
      );
      const row = rows[0];
      return {
        connections: Number(row?.connections ?? 0),
        held: Number(row?.held ?? 0),
        waiting: Number(row?.waiting ?? 0),
      };
    };
    // The tasks each instance claimed (migration 020: a task names the instance that claimed it).
    const instanceName = (server: Pipewright) =>
      readFileSync(join(server.dataDir, 'instance'), 'utf8').trim();
    const claims = async () =>
      new Map(
        (
          await observer.query<{ server_instance: string; n: string }>(
            'SELECT server_instance, count(*) AS n FROM tasks GROUP BY server_instance',
          )
        ).rows.map((row) => [row.server_instance, Number(row.n)]),
      );
    /** Runs `work` while looking at the database every 50 ms. */
    const observe = async <T>(work: () => Promise<T>): Promise<Observed<T>> => {
      const looks: Awaited<ReturnType<typeof look>>[] = [];
      let done = false;
      const sampling = (async () => {
        while (!done) {
          looks.push(await look());
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      let result: T;
      try {
        result = await work();
      } finally {
        done = true;
        await sampling;
      }
      return {
        result,
        peakConnections: Math.max(...looks.map((l) => l.connections)),
        lockHeld: mean(looks.map((l) => Math.min(1, l.held))),
        lockWaiting: mean(looks.map((l) => l.waiting)),
      };
    };

    const events = context.quick ? 200 : 1000;
    const readSeconds = context.quick ? 1 : 4;
    const order = context.quick ? [1, 2, 3] : [1, 2, 3, 3, 2, 1];
    const phases: Phase[] = [];
    for (const count of order) {
      await scale(count);
      const beforeReads = commits;
      const read = await observe(() => reads(running, readSeconds));
      const readCommits = commits - beforeReads;
      if (read.result.errors > 0)
        throw new Error(`${read.result.errors} read errors with ${count} instances`);
      const clients = running.map((server) => server.client());
      const before = commits;
      const claimedBefore = await claims();
      const ingested = await observe(() => ingest(clients, counts, events));
      const claimedAfter = await claims();
      const claimed = running.map(
        (server) =>
          (claimedAfter.get(instanceName(server)) ?? 0) - (claimedBefore.get(instanceName(server)) ?? 0),
      );
      const phase: Phase = {
        instances: count,
        readsPerSecond: read.result.requestsPerSecond,
        pipelinesPerMinute: perMinute(events, ingested.result),
        eventsPerSecond: (events / ingested.result.acceptedMs) * 1000,
        commits: commits - before,
        readCommits,
        peakConnections: Math.max(read.peakConnections, ingested.peakConnections),
        lockHeld: ingested.lockHeld,
        lockWaiting: ingested.lockWaiting,
        lockMsPerCommit: (ingested.lockHeld * ingested.result.doneMs) / (commits - before),
      };
      phases.push(phase);
      context.log(
        `${named(count)}: ${Math.round(phase.readsPerSecond)} req/s, ${Math.round(phase.pipelinesPerMinute)} pipelines/min, ` +
          `${Math.round(phase.eventsPerSecond)} events/s accepted, ${(phase.commits / events).toFixed(1)} writing commits per pipeline, ` +
          `${phase.readCommits} commits during the reads, ${phase.peakConnections} connections at most, ` +
          `write lock held in ${Math.round(phase.lockHeld * 100)}% of looks (${phase.lockMsPerCommit.toFixed(1)} ms per commit), ` +
          `${phase.lockWaiting.toFixed(2)} waiting; tasks claimed by instance: ${claimed.join(', ')}`,
      );
    }
    return rowsOf(phases, events);
  } finally {
    await Promise.all(running.map((server) => server.stop()));
    for (const close of closing) await close().catch(() => {});
    cluster.stop();
  }
}

const named = (count: number) => `${count} instance${count > 1 ? 's' : ''}`;

function rowsOf(phases: Phase[], events: number): Row[] {
  const of = (count: number) => phases.filter((phase) => phase.instances === count);
  const one = of(1);
  // Phases come in rounds, each count once per round: the kth phase of a count is of round k.
  const compared = (count: number, figure: (phase: Phase) => number) => {
    const ours = of(count).map(figure);
    const base = one.map(figure);
    return {
      ours: mean(ours),
      baseline: mean(base),
      ratio: mean(ours.map((value, round) => (base[round] as number) / value)),
    };
  };
  const rows: Row[] = [];
  const scaled = (metric: string, unit: string, figure: (phase: Phase) => number) => {
    rows.push({
      benchmark: 'instances',
      metric: `${metric}, ${named(1)}`,
      ours: mean(one.map(figure)),
      unit,
    });
    for (let count = 2; count <= MOST; count += 1) {
      rows.push({
        benchmark: 'instances',
        metric: `${metric}, ${named(count)}`,
        ...compared(count, figure),
        baselineName: '1 instance',
        unit,
      });
    }
  };
  scaled(
    `pipelines completed per minute (${events} events, 8 in flight, round robin)`,
    'per min',
    (phase) => phase.pipelinesPerMinute,
  );
  scaled(
    `GET /v0/projects/id/{id} req/s (${READ_CONNECTIONS} connections, round robin)`,
    'req/s',
    (phase) => phase.readsPerSecond,
  );
  for (let count = 1; count <= MOST; count += 1) {
    rows.push({
      benchmark: 'instances',
      metric: `writing commits per pipeline (notifications counted), ${named(count)}`,
      ours: mean(of(count).map((phase) => phase.commits / events)),
      unit: 'commits',
    });
  }
  for (let count = 1; count <= MOST; count += 1) {
    rows.push({
      benchmark: 'instances',
      metric: `write lock held while the events ran (share of looks every 50 ms), ${named(count)}`,
      ours: 100 * mean(of(count).map((phase) => phase.lockHeld)),
      unit: '%',
    });
    rows.push({
      benchmark: 'instances',
      metric: `write lock held per writing commit (held share x time / commits), ${named(count)}`,
      ours: mean(of(count).map((phase) => phase.lockMsPerCommit)),
      unit: 'ms',
    });
    rows.push({
      benchmark: 'instances',
      metric: `connections waiting for the write lock while the events ran (mean of looks), ${named(count)}`,
      ours: mean(of(count).map((phase) => phase.lockWaiting)),
      unit: 'connections',
    });
  }
  for (let count = 1; count <= MOST; count += 1) {
    rows.push({
      benchmark: 'instances',
      metric: `PostgreSQL connections of the servers, most at once, ${named(count)}`,
      ours: Math.max(...of(count).map((phase) => phase.peakConnections)),
      unit: 'connections',
    });
  }
  return rows;
}
