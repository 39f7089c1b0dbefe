import { join } from 'node:path';
import type { Context, Row } from '../lib/context.js';
import { load } from '../lib/load.js';
import { DATABASE_FILE, SERVERS_DIR, startPipewright } from '../lib/pipewright.js';
import { startServer } from '../lib/processes.js';
import { alternate, median } from '../lib/stats.js';

/** 1. What our handlers add to Express + the validator, and to a bare node:http server. */
export async function httpOverhead(context: Context): Promise<Row[]> {
  const ours = await startPipewright(context.dir('http'));
  const { data: project } = await ours.client().POST('/projects', { body: { name: 'bench' } });
  const floor = await startServer([join(SERVERS_DIR, 'floor.js')]);
  const bare = await startServer([join(SERVERS_DIR, 'bare.js'), join(ours.dataDir, DATABASE_FILE)]);
  const seconds = context.quick ? 2 : 5;
  const rounds = context.quick ? 1 : 3;
  const headers = { authorization: `Bearer ${ours.apiKey}` };
  const rows: Row[] = [];
  try {
    for (const path of ['/v0/status', `/v0/projects/id/${project?.id}`]) {
      const throughput = (baseUrl: string) => async () => {
        const result = await load(`${baseUrl}${path}`, { headers, seconds, connections: 10 });
        if (result.errors > 0) throw new Error(`${result.errors} errors on ${baseUrl}${path}`);
        return result.requestsPerSecond;
      };
      context.log(`GET ${path}: ${rounds} rounds of ${seconds} s each, alternating`);
      const samples = await alternate(rounds, {
        ours: throughput(ours.baseUrl),
        floor: throughput(floor.baseUrl),
        bare: throughput(bare.baseUrl),
      });
      const [o, f, b] = [median(samples.ours), median(samples.floor), median(samples.bare)];
      const route = path.startsWith('/v0/projects') ? 'GET /v0/projects/id/{id}' : 'GET /v0/status';
      rows.push(
        {
          benchmark: 'http',
          metric: `${route} req/s vs Express + validator`,
          ours: o,
          baseline: f,
          baselineName: 'express+validator',
          ratio: f / o,
          unit: 'req/s',
          goal: 'ratio <= 1.2',
          met: f / o <= 1.2,
        },
        {
          benchmark: 'http',
          metric: `${route} req/s vs bare node:http + SQLite`,
          ours: o,
          baseline: b,
          baselineName: 'node:http',
          ratio: b / o,
          unit: 'req/s',
        },
      );
    }
  } finally {
    await Promise.all([ours.stop(), floor.stop(), bare.stop()]);
  }
  return rows;
}
