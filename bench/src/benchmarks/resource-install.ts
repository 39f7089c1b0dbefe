import { join } from 'node:path';
import type { Context, Row } from '../lib/context.js';
import { SERVERS_DIR, startPipewright } from '../lib/pipewright.js';
import { startServer } from '../lib/processes.js';
import { alternate, median } from '../lib/stats.js';

/** 1,000 specs: 250 each of tasks, pipelines, commands and triggers, all referring to each other. */
export function thousandSpecs(): unknown[] {
  const specs: unknown[] = [];
  for (let i = 0; i < 250; i += 1) {
    specs.push(
      {
        type: 'task',
        version: 1,
        name: `task-${i}`,
        data: { steps: [{ label: 'Build', code: `echo ${i}` }] },
      },
      {
        type: 'pipeline',
        version: 1,
        name: `pipeline-${i}`,
        data: {
          tasks: [{ task: `task-${i}` }, { name: 'again', task: `task-${i}`, dependencies: [`task-${i}`] }],
        },
      },
      {
        type: 'command',
        version: 1,
        name: `command-${i}`,
        data: {
          parameters: [{ name: 'target', type: 'string', values: ['a', 'b'], default: 'a' }],
          pipelines: [`pipeline-${i}`],
        },
      },
      {
        type: 'trigger',
        version: 1,
        name: `trigger-${i}`,
        data: {
          connector: 'custom',
          event: `event-${i}`,
          filters: [{ path: '/branch', is_equal_to: 'main' }],
          pipelines: [`pipeline-${i}`],
        },
      },
    );
  }
  return specs;
}

/** 6. Installing 1,000 specs into an empty project, and installing them again unchanged. */
export async function resourceInstall(context: Context): Promise<Row[]> {
  const ours = await startPipewright(context.dir('install'));
  const floor = await startServer([join(SERVERS_DIR, 'floor.js')]);
  const body = JSON.stringify({ specs: thousandSpecs() });
  const put = async (baseUrl: string, projectId: string) => {
    const started = performance.now();
    const response = await fetch(`${baseUrl}/v0/projects/id/${projectId}/resources`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ours.apiKey}`, 'content-type': 'application/json' },
      body,
    });
    if (response.status !== 204)
      throw new Error(`install answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
    return performance.now() - started;
  };
  try {
    let round = 0;
    let projectId = '';
    const rounds = context.quick ? 1 : 5;
    context.log(`1,000 specs (${Math.round(body.length / 1024)} KiB), ${rounds} rounds`);
    const samples = await alternate(rounds, {
      first: async () => {
        round += 1;
        const { data } = await ours.client().POST('/projects', { body: { name: `install-${round}` } });
        projectId = data?.id ?? '';
        return put(ours.baseUrl, projectId);
      },
      again: () => put(ours.baseUrl, projectId),
      floor: () => put(floor.baseUrl, '2Fw1aD5gHj8kLm2nPq4rSt6uVw8'),
    });
    const floorMs = median(samples.floor);
    const row = (metric: string, ms: number, goalMs: number): Row => ({
      benchmark: 'install',
      metric,
      ours: ms,
      baseline: floorMs,
      baselineName: "express + Pipewright's validator, no-op",
      ratio: ms / floorMs,
      unit: 'ms',
      goal: `< ${goalMs} ms`,
      met: ms < goalMs,
    });
    return [
      row('1,000 specs, first install', median(samples.first), 1000),
      row('1,000 specs, unchanged re-install', median(samples.again), 300),
    ];
  } finally {
    await Promise.all([ours.stop(), floor.stop()]);
  }
}
