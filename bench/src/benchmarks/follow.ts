import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Row } from '../lib/context.js';
import { installProject, resourceId, startPipewright, until } from '../lib/pipewright.js';
import { percentile } from '../lib/stats.js';
import { nowMs } from './streams-readers.js';

const CLI_BIN = fileURLToPath(new URL('../../../apps/cli/bin/pipewright.js', import.meta.url));

/** The lines of the step: `follow-N.`, found in whatever a reader reads (JSON or text). */
const LINE = /follow-(\d+)\./g;
const line = (n: number) => `follow-${n}.\n`;

/** Calls `seen(n)` for every line `follow-n.` in what `source` gives, as it comes. */
function watchLines(source: NodeJS.ReadableStream | Socket, seen: (n: number, at: number) => void) {
  source.on('data', (chunk: Buffer) => {
    const at = nowMs();
    for (const match of chunk.toString('latin1').matchAll(LINE)) seen(Number(match[1]), at);
  });
}

/**
 * Task output, live (issue #24): from a line written by a step to the line read, on the task's
 * output stream by a raw client (GET /v0/tasks/id/{id}/output), and as printed by `pipewright tasks
 * output --follow`, the CLI as a process, both following the same task at once. The step copies
 * lines from a FIFO to its output; the benchmark writes each line into the FIFO once the previous
 * one has reached both readers, and times it from there (before the step itself writes it).
 */
export async function follow(context: Context): Promise<Row[]> {
  const server = await startPipewright(context.dir('follow'));
  // The step runs as a task user of its own: the FIFO is where it can open it.
  const cueDir = mkdtempSync(join(tmpdir(), 'pipewright-follow-'));
  chmodSync(cueDir, 0o755);
  const fifo = join(cueDir, 'lines');
  execFileSync('mkfifo', ['-m', '666', fifo]);
  // Read and write: opening never waits for the step, and the step sees the end once this closes.
  let cue: number | undefined = openSync(fifo, 'r+');
  let cli: ChildProcess | undefined;
  let stream: Socket | undefined;
  try {
    const projectId = await installProject(server, 'follow', [
      {
        type: 'task',
        version: 1,
        name: 'echo',
        data: {
          environment: { CUE: fifo },
          steps: [{ code: `while IFS= read -r line; do printf '%s\\n' "$line"; done < "$CUE"` }],
        },
      },
      { type: 'pipeline', version: 1, name: 'echo', data: { tasks: [{ task: 'echo' }] } },
      { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['echo'] } },
    ]);
    const client = server.client(projectId);
    const { data: execution } = await client.POST('/commands/id/{id}/execute', {
      params: { path: { id: await resourceId(client, 'command', 'go') } },
      body: {},
    });
    const pipelineId = execution?.pipeline_ids[0] as string;
    let taskId: string | undefined;
    for (let tries = 0; taskId === undefined; tries += 1) {
      if (tries === 300) throw new Error('the pipeline has no task');
      const { data } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId } } });
      taskId = data?.elements[0]?.id;
      if (taskId === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // When each reader read each line.
    const readBy = { stream: new Map<number, number>(), cli: new Map<number, number>() };
    const { hostname, port } = new URL(server.baseUrl);
    stream = connect(Number(port), hostname);
    stream.setNoDelay(true);
    stream.write(
      `GET /v0/tasks/id/${taskId}/output?project_id=${projectId} HTTP/1.1\r\nHost: ${hostname}\r\n` +
        `Authorization: Bearer ${server.apiKey}\r\n\r\n`,
    );
    watchLines(stream, (n, at) => readBy.stream.set(n, at));
    const home = context.dir('follow-cli');
    cli = spawn(process.execPath, [CLI_BIN, 'tasks', 'output', '--follow', taskId], {
      cwd: home,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        PIPEWRIGHT_API_URL: server.baseUrl,
        PIPEWRIGHT_API_KEY: server.apiKey,
        PIPEWRIGHT_PROJECT_ID: projectId,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const ended = new Promise((resolve) => cli?.once('exit', resolve));
    watchLines(cli.stdout as NodeJS.ReadableStream, (n, at) => readBy.cli.set(n, at));
    const readByBoth = (n: number) => readBy.stream.has(n) && readBy.cli.has(n);

    // Line 0 once the task runs and both follow it; then each line alone, after a pause of
    // 0-20 ms, so that lines fall anywhere in the server's rhythm.
    writeSync(cue, line(0));
    await until(() => readByBoth(0), 60_000, 1);
    const samples = context.quick ? 10 : 100;
    context.log(`${samples} lines written by a step, read by a stream and by the CLI`);
    const written = new Map<number, number>();
    for (let n = 1; n <= samples; n += 1) {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
      written.set(n, nowMs());
      writeSync(cue, line(n));
      await until(() => readByBoth(n), 30_000, 1);
    }
    // The end of the FIFO ends the step, the task, and the CLI with it.
    closeSync(cue);
    cue = undefined;
    await Promise.race([
      ended,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('the CLI did not end with the task')), 30_000),
      ),
    ]);

    const rows: Row[] = [];
    for (const [reader, what] of [
      ['stream', 'read on the task output stream (raw client)'],
      ['cli', 'printed by `pipewright tasks output --follow`'],
    ] as const) {
      const latencies = [...written].map(([n, at]) => (readBy[reader].get(n) as number) - at);
      for (const p of [50, 99]) {
        rows.push({
          benchmark: 'follow',
          metric: `line written by a step -> ${what}, p${p}`,
          ours: percentile(latencies, p),
          unit: 'ms',
        });
      }
    }
    return rows;
  } finally {
    if (cue !== undefined) closeSync(cue);
    stream?.destroy();
    cli?.kill();
    await server.stop();
    rmSync(cueDir, { recursive: true, force: true });
  }
}
