import type { Context, Row } from '../lib/context.js';
import { executeAndWait } from '../lib/execute.js';
import {
  installProject,
  resourceId,
  startBareSpawner,
  startPipewright,
  trivialTask,
} from '../lib/pipewright.js';
import { alternate, median } from '../lib/stats.js';

/** 4. A pipeline of 200 independent trivial tasks vs the same 200 processes spawned directly. */
export async function schedulerOverhead(context: Context): Promise<Row[]> {
  const ours = await startPipewright(context.dir('scheduler'));
  const bare = await startBareSpawner().catch(async (error: unknown) => {
    await ours.stop();
    throw error;
  });
  const size = 200;
  try {
    const tasks = Array.from({ length: size }, (_, i) => ({ name: `t${i}`, task: 'noop' }));
    const projectId = await installProject(ours, 'fanout', [
      trivialTask,
      { type: 'pipeline', version: 1, name: 'wide', data: { concurrent: true, tasks } },
      { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['wide'] } },
    ]);
    const client = ours.client(projectId);
    const commandId = await resourceId(client, 'command', 'go');
    context.log(`${size} tasks, ${context.parallelism} at a time`);
    // Odd counts: a median is then the middle sample, not the lower of the two middle ones.
    const samples = await alternate(context.quick ? 1 : 5, {
      ours: () => executeAndWait(ours, client, commandId),
      bare: async () => {
        const started = performance.now();
        await bare.spawnMany(['true'], size, context.parallelism);
        return performance.now() - started;
      },
    });
    const [o, b] = [median(samples.ours), median(samples.bare)];
    // A round runs both back to back: a burst of load elsewhere weighs on a round more than on
    // one side, so the ratio is the median of the rounds' own ratios (as in http-overhead.ts).
    const ratio = median(samples.ours.map((ours, i) => ours / (samples.bare[i] as number)));
    return [
      {
        benchmark: 'scheduler',
        metric: `pipeline of ${size} trivial tasks, wall time`,
        ours: o,
        baseline: b,
        baselineName: `spawn true x${context.parallelism}`,
        ratio,
        unit: 'ms',
        goal: 'ratio <= 1.5',
        met: ratio <= 1.5,
      },
    ];
  } finally {
    bare.stop();
    await ours.stop();
  }
}
