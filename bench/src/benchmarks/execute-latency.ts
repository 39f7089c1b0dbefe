import { spawn } from 'node:child_process';
import type { Context, Row } from '../lib/context.js';
import { viewOf } from '../lib/database.js';
import { installProject, resourceId, startPipewright, until } from '../lib/pipewright.js';
import { percentile } from '../lib/stats.js';

/** Wall-clock time in ms, with sub-millisecond precision, comparable with `date +%s%N`. */
const wallClockMs = () => performance.timeOrigin + performance.now();

/** 3. From `POST .../execute` answering to the first task's process running, at a steady rate. */
export async function executeLatency(context: Context): Promise<Row[]> {
  const ours = await startPipewright(context.dir('latency'));
  const rate = 20;
  const count = context.quick ? 60 : 300;
  try {
    const projectId = await installProject(ours, 'latency', [
      {
        type: 'task',
        version: 1,
        name: 'stamp',
        data: { steps: [{ command: 'date', arguments: ['+%s%N'] }] },
      },
      { type: 'pipeline', version: 1, name: 'one', data: { concurrent: true, tasks: [{ task: 'stamp' }] } },
      { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['one'] } },
    ]);
    const client = ours.client(projectId);
    const commandId = await resourceId(client, 'command', 'go');
    const answered = new Map<string, number>();
    context.log(`${count} executions at ${rate}/s`);
    const executions: Promise<void>[] = [];
    for (let i = 0; i < count; i += 1) {
      executions.push(
        client
          .POST('/commands/id/{id}/execute', { params: { path: { id: commandId } }, body: {} })
          .then(({ data }) => {
            answered.set(data?.pipeline_ids[0] ?? '', wallClockMs());
          }),
      );
      await new Promise((resolve) => setTimeout(resolve, 1000 / rate));
    }
    await Promise.all(executions);
    const db = viewOf(ours);
    const stamps = () =>
      db.all<{ pipeline_id: string; text: string }>(
        `SELECT t.pipeline_id, c.text FROM step_output_chunks c JOIN tasks t ON t.id = c.task_id`,
      );
    await until(async () => (await stamps()).length >= count, 120_000).catch(async (error: unknown) => {
      await db.close();
      throw error;
    });
    const latencies = (await stamps()).map(
      (row) => Number(BigInt(row.text.trim()) / 1000n) / 1000 - (answered.get(row.pipeline_id) ?? 0),
    );
    await db.close();

    // Baseline: the same program spawned directly; from the spawn call to its clock reading.
    const bare: number[] = [];
    for (let i = 0; i < (context.quick ? 20 : 100); i += 1) {
      const before = wallClockMs();
      const output = await new Promise<string>((resolve) => {
        let text = '';
        const child = spawn('date', ['+%s%N']);
        child.stdout.on('data', (chunk) => {
          text += chunk;
        });
        child.once('close', () => resolve(text));
      });
      bare.push(Number(BigInt(output.trim()) / 1000n) / 1000 - before);
    }
    const rows: Row[] = [];
    for (const [p, goal] of [
      [50, 20],
      [99, 100],
    ] as const) {
      const value = percentile(latencies, p);
      const base = percentile(bare, p);
      rows.push({
        benchmark: 'latency',
        metric: `execute answered -> task process running, p${p}`,
        ours: value,
        baseline: base,
        baselineName: 'spawn date directly',
        ratio: value / base,
        unit: 'ms',
        goal: `< ${goal} ms`,
        met: value < goal,
      });
    }
    return rows;
  } finally {
    await ours.stop();
  }
}
