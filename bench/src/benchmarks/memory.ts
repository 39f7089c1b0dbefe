import { join } from 'node:path';
import { type BigData, EVENT_COUNT, PIPELINE_COUNT } from '../lib/big-data.js';
import type { Context, Row } from '../lib/context.js';
import { databaseName, databaseTarget } from '../lib/database.js';
import { load } from '../lib/load.js';
import { SERVERS_DIR } from '../lib/pipewright.js';
import { startServer } from '../lib/processes.js';

/** 7. Resident memory with 1,000,000 events and 10,000 pipelines stored, idle and under load. */
export async function memory(context: Context, big: BigData): Promise<Row[]> {
  const { server, projectId } = big;
  // The bare server reads the same database as ours, SQLite's file or PostgreSQL's.
  const bare = await startServer([join(SERVERS_DIR, 'bare.js'), databaseTarget(server)]);
  const bareName = `node:http + ${databaseName(server)}, idle`;
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const idle = server.rssMiB();
    const bareIdle = bare.rssMiB();
    const headers = { authorization: `Bearer ${server.apiKey}`, 'x-service-project-id': projectId };
    let peak = idle;
    const sampler = setInterval(() => {
      peak = Math.max(peak, server.rssMiB());
    }, 100);
    const seconds = context.quick ? 2 : 5;
    context.log(`load on events and pipelines for ${seconds} s each, sampling RSS`);
    for (const path of [
      '/v0/events?size=100&sort=event_time',
      '/v0/pipelines?size=100',
      '/v0/events?size=100&name=event-3',
    ]) {
      await load(`${server.baseUrl}${path}`, { headers, seconds, connections: 10 });
    }
    clearInterval(sampler);
    const stored = `${EVENT_COUNT.toLocaleString('en')} events, ${PIPELINE_COUNT.toLocaleString('en')} pipelines`;
    return [
      {
        benchmark: 'memory',
        metric: `RSS idle with ${stored}`,
        ours: idle,
        baseline: bareIdle,
        baselineName: bareName,
        ratio: idle / bareIdle,
        unit: 'MiB',
        goal: '< 200 MiB',
        met: idle < 200,
      },
      {
        benchmark: 'memory',
        metric: `RSS peak under load with ${stored}`,
        ours: peak,
        baseline: bareIdle,
        baselineName: bareName,
        ratio: peak / bareIdle,
        unit: 'MiB',
        goal: '< 200 MiB',
        met: peak < 200,
      },
    ];
  } finally {
    await bare.stop();
  }
}
