import type { Context, Row } from '../lib/context.js';
import { viewOf } from '../lib/database.js';
import { INGEST_SPECS, ingest, perMinute, pipelineCounts } from '../lib/ingest.js';
import { installProject, startBareSpawner, startPipewright } from '../lib/pipewright.js';

/** 2. Custom events through one trigger to one pipeline of one trivial task, end to end. */
export async function eventIngestion(context: Context): Promise<Row[]> {
  const ours = await startPipewright(context.dir('events'));
  const count = context.quick ? 200 : 1200;
  const inFlight = 8;
  try {
    await installProject(ours, 'ingest', INGEST_SPECS);
    const counts = pipelineCounts(viewOf(ours));
    context.log(`${count} events, ${inFlight} in flight`);
    const ingestion = await ingest([ours.client()], counts, count, inFlight).finally(() => counts.close());

    const bare = await startBareSpawner();
    const bareStart = performance.now();
    await bare.spawnMany(['true'], count, context.parallelism).finally(() => bare.stop());
    const bareMs = performance.now() - bareStart;
    const pipelinesPerMinute = perMinute(count, ingestion);
    const processesPerMinute = (count / bareMs) * 60_000;
    return [
      {
        benchmark: 'events',
        metric: 'events accepted per second (POST /v0/events answered)',
        ours: (count / ingestion.acceptedMs) * 1000,
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
