import type { Context, Row } from '../lib/context.js';
import {
  installProject,
  openReadOnly,
  startBareSpawner,
  startPipewright,
  trivialTask,
  until,
} from '../lib/pipewright.js';

/** 2. Custom events through one trigger to one pipeline of one trivial task, end to end. */
export async function eventIngestion(context: Context): Promise<Row[]> {
  const ours = await startPipewright(context.dir('events'));
  const count = context.quick ? 200 : 1200;
  const inFlight = 8;
  try {
    await installProject(ours, 'ingest', [
      trivialTask,
      { type: 'pipeline', version: 1, name: 'one', data: { concurrent: true, tasks: [{ task: 'noop' }] } },
      {
        type: 'trigger',
        version: 1,
        name: 'on-bench',
        data: { connector: 'custom', event: 'bench', pipelines: ['one'] },
      },
    ]);
    const db = openReadOnly(ours.dataDir);
    const ended = db.prepare<[], { n: number }>(
      `SELECT count(*) AS n FROM pipelines WHERE status IN ('successful', 'failed', 'aborted')`,
    );
    const failed = db.prepare<[], { n: number }>(
      `SELECT count(*) AS n FROM pipelines WHERE status <> 'successful'`,
    );
    const client = ours.client();
    context.log(`${count} events, ${inFlight} in flight`);
    const started = performance.now();
    let sent = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (sent < count) {
          sent += 1;
          await client.POST('/events', { body: { connector: 'custom', name: 'bench', data: { n: sent } } });
        }
      }),
    );
    const accepted = performance.now();
    await until(() => (ended.get()?.n ?? 0) >= count, 600_000);
    const done = performance.now();
    if ((failed.get()?.n ?? 0) > 0) throw new Error('some pipelines did not succeed');
    db.close();

    const bare = await startBareSpawner();
    const bareStart = performance.now();
    await bare.spawnMany(['true'], count, context.parallelism).finally(() => bare.stop());
    const bareMs = performance.now() - bareStart;
    const pipelinesPerMinute = (count / (done - started)) * 60_000;
    const processesPerMinute = (count / bareMs) * 60_000;
    return [
      {
        benchmark: 'events',
        metric: 'events accepted per second (POST /v0/events answered)',
        ours: (count / (accepted - started)) * 1000,
        unit: 'events/s',
      },
      {
        benchmark: 'events',
        metric: 'pipelines completed per minute vs spawning the same processes',
        ours: pipelinesPerMinute,
        baseline: processesPerMinute,
        baselineName: `spawn true x${context.parallelism}`,
        ratio: processesPerMinute / pipelinesPerMinute,
        unit: 'per min',
        goal: '>= 3000 per min',
        met: pipelinesPerMinute >= 3000,
      },
    ];
  } finally {
    await ours.stop();
  }
}
