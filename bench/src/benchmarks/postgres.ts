import { startPostgresCluster } from '@pipewright/testing/postgres';
import type { Context, Row } from '../lib/context.js';
import { viewOf } from '../lib/database.js';
import { INGEST_SPECS, ingest, perMinute, pipelineCounts } from '../lib/ingest.js';
import { load } from '../lib/load.js';
import { installProject, type Pipewright, projectPath, startPipewright } from '../lib/pipewright.js';
import { alternate, median } from '../lib/stats.js';

/**
 * The same server on PostgreSQL (a throwaway cluster on this machine, over its Unix socket)
 * against SQLite, side by side in one run: requests per second of a read, and pipelines
 * completed per minute from custom events. Ratios are SQLite's figure over PostgreSQL's (above
 * 1: PostgreSQL is slower).
 */
export async function postgres(context: Context): Promise<Row[]> {
  const cluster = await startPostgresCluster();
  const servers: Pipewright[] = [];
  try {
    const database = await cluster.createDatabase('bench');
    const sqlite = await startPipewright(context.dir('postgres-sqlite'));
    servers.push(sqlite);
    const onPostgres = await startPipewright(context.dir('postgres-postgres'), ['--database', database]);
    servers.push(onPostgres);
    const variants = { sqlite, postgres: onPostgres };

    // Ended pipelines, counted in each database itself, not through the API it loads.
    const counts = { sqlite: pipelineCounts(viewOf(sqlite)), postgres: pipelineCounts(viewOf(onPostgres)) };

    const rows: Row[] = [];
    try {
      // A read: GET /v0/projects/id/{id}, as the http benchmark measures it.
      const paths = {
        sqlite: await projectPath(sqlite),
        postgres: await projectPath(onPostgres),
      };
      const seconds = context.quick ? 1 : 2;
      const rounds = context.quick ? 3 : 7;
      const throughput =
        (name: keyof typeof variants, duration = seconds) =>
        async () => {
          const server = variants[name];
          const result = await load(`${server.baseUrl}${paths[name]}`, {
            headers: { authorization: `Bearer ${server.apiKey}` },
            seconds: duration,
            connections: 10,
          });
          if (result.errors > 0) throw new Error(`${result.errors} errors on ${name}`);
          return result.requestsPerSecond;
        };
      for (const name of ['sqlite', 'postgres'] as const) await throughput(name, 1)();
      context.log(`GET /v0/projects/id/{id}: ${rounds} rounds of ${seconds} s each, alternating`);
      const reads = await alternate(rounds, {
        sqlite: throughput('sqlite'),
        postgres: throughput('postgres'),
      });
      const readRatio = median(reads.sqlite.map((s, i) => s / (reads.postgres[i] as number)));
      rows.push({
        benchmark: 'postgres',
        metric: 'GET /v0/projects/id/{id} req/s on PostgreSQL vs SQLite',
        ours: median(reads.postgres),
        baseline: median(reads.sqlite),
        baselineName: 'SQLite',
        ratio: readRatio,
        unit: 'req/s',
      });

      // Pipelines from events, end to end: one trigger, one pipeline of one trivial task.
      const events = context.quick ? 200 : 1000;
      const pipelinesPerMinute: Record<keyof typeof variants, number> = { sqlite: 0, postgres: 0 };
      for (const name of ['sqlite', 'postgres'] as const) {
        const server = variants[name];
        await installProject(server, 'ingest', INGEST_SPECS);
        context.log(`${name}: ${events} events, 8 in flight`);
        pipelinesPerMinute[name] = perMinute(events, await ingest([server.client()], counts[name], events));
      }
      const ratio = pipelinesPerMinute.sqlite / pipelinesPerMinute.postgres;
      rows.push({
        benchmark: 'postgres',
        metric: 'pipelines completed per minute on PostgreSQL vs SQLite',
        ours: pipelinesPerMinute.postgres,
        baseline: pipelinesPerMinute.sqlite,
        baselineName: 'SQLite',
        ratio,
        unit: 'per min',
        goal: '>= 0.5x SQLite',
        met: ratio <= 2,
      });
    } finally {
      await Promise.all([counts.sqlite.close(), counts.postgres.close()]);
    }
    return rows;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    cluster.stop();
  }
}
