import { join } from 'node:path';
import type { Context, Row } from '../lib/context.js';
import { databaseName, databaseTarget } from '../lib/database.js';
import { load } from '../lib/load.js';
import { SERVERS_DIR, startPipewright } from '../lib/pipewright.js';
import { startServer } from '../lib/processes.js';
import { alternate, median } from '../lib/stats.js';

/** 1. What our handlers add to Express + the validator, and to a bare node:http server. */
export async function httpOverhead(context: Context): Promise<Row[]> {
  const ours = await startPipewright(context.dir('http'));
  const { data: project } = await ours.client().POST('/projects', { body: { name: 'bench' } });
  const floor = await startServer([join(SERVERS_DIR, 'floor.js')]);
  // The bare server reads the same database as ours, SQLite's file or PostgreSQL's.
  const bare = await startServer([join(SERVERS_DIR, 'bare.js'), databaseTarget(ours)]);
  const bareName = databaseName(ours);
  const seconds = context.quick ? 1 : 2;
  // Odd counts: a median is then the middle sample, not the lower of the two middle ones.
  const rounds = context.quick ? 3 : 9;
  const headers = { authorization: `Bearer ${ours.apiKey}` };
  const rows: Row[] = [];
  try {
    for (const path of ['/v0/status', `/v0/projects/id/${project?.id}`]) {
      const throughput =
        (baseUrl: string, duration = seconds) =>
        async () => {
          const result = await load(`${baseUrl}${path}`, { headers, seconds: duration, connections: 10 });
          if (result.errors > 0) throw new Error(`${result.errors} errors on ${baseUrl}${path}`);
          return result.requestsPerSecond;
        };
      // Untimed: the first timed round finds every server's code compiled and caches filled.
      for (const server of [ours, floor, bare]) await throughput(server.baseUrl, 1)();
      context.log(`GET ${path}: ${rounds} rounds of ${seconds} s each, alternating`);
      const samples = await alternate(rounds, {
        ours: throughput(ours.baseUrl),
        floor: throughput(floor.baseUrl),
        bare: throughput(bare.baseUrl),
      });
      const o = median(samples.ours);
      // A round runs the servers back to back: a burst of load elsewhere on the machine
      // weighs on a round more than on a server, so the ratio is the median of the rounds'.
      const ratioOf = (baseline: number[]) => median(baseline.map((b, i) => b / (samples.ours[i] as number)));
      const [floorRatio, bareRatio] = [ratioOf(samples.floor), ratioOf(samples.bare)];
      const perRound = samples.floor.map((f, i) => (f / (samples.ours[i] as number)).toFixed(2));
      context.log(`  ratio to Express + validator by round: ${perRound.join(' ')}`);
      const route = path.startsWith('/v0/projects') ? 'GET /v0/projects/id/{id}' : 'GET /v0/status';
      rows.push(
        {
          benchmark: 'http',
          metric: `${route} req/s vs Express + validator`,
          ours: o,
          baseline: median(samples.floor),
          baselineName: 'express+validator',
          ratio: floorRatio,
          unit: 'req/s',
          goal: 'ratio <= 1.2',
          met: floorRatio <= 1.2,
        },
        {
          benchmark: 'http',
          metric: `${route} req/s vs bare node:http + ${bareName}`,
          ours: o,
          baseline: median(samples.bare),
          baselineName: 'node:http',
          ratio: bareRatio,
          unit: 'req/s',
        },
      );
    }
  } finally {
    await Promise.all([ours.stop(), floor.stop(), bare.stop()]);
  }
  return rows;
}
