import { execFile } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import type { Context, Row } from '../lib/context.js';
import {
  DATABASE_FILE,
  installProject,
  type Pipewright,
  resourceId,
  SERVER_BIN,
  startPipewright,
  trivialTask,
  until,
} from '../lib/pipewright.js';
import { percentile } from '../lib/stats.js';

/** Wall-clock time in ms, with sub-millisecond precision, the same in every process of the machine. */
const wallClockMs = () => performance.timeOrigin + performance.now();
/** The server's cap of streams per key (its default): the streams are spread over keys. */
const STREAMS_PER_KEY = 100;

/** A key of a new account of the default organization, made by the server program's admin command. */
async function newKey(server: Pipewright, n: number): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    SERVER_BIN,
    'create-account',
    '--organization',
    'default',
    '--email',
    `streams-${n}@bench.test`,
    '--role',
    'user',
    '--data-dir',
    server.dataDir,
  ]);
  return stdout.trim().split('\n').at(-1) as string;
}

/**
 * `count` streams of the project's changes on raw connections, spread over keys, each calling
 * `onMessage` when a message of type `event` arrives: the lightest client one process can be for
 * hundreds of streams (the typed client's parsing would weigh on the figures as much as the server).
 */
async function openStreams(
  baseUrl: string,
  keys: string[],
  projectId: string,
  count: number,
  query: string,
  event: string,
  onMessage: (stream: number) => void,
) {
  const { hostname, port } = new URL(baseUrl);
  const marker = `event: ${event}\n`;
  const sockets: Socket[] = [];
  const started: Promise<void>[] = [];
  for (let n = 0; n < count; n += 1) {
    const socket = connect(Number(port), hostname);
    socket.setNoDelay(true);
    sockets.push(socket);
    const key = keys[Math.floor(n / STREAMS_PER_KEY)];
    socket.write(
      `GET /v0/changes?project_id=${projectId}${query} HTTP/1.1\r\nHost: ${hostname}\r\n` +
        `Authorization: Bearer ${key}\r\n\r\n`,
    );
    let tail = '';
    started.push(
      new Promise((resolve, reject) => {
        socket.once('error', reject);
        socket.on('data', (chunk: Buffer) => {
          const text = tail + chunk.toString('latin1');
          if (text.includes('event: start\n')) resolve();
          let at = text.indexOf(marker);
          while (at >= 0) {
            onMessage(n);
            at = text.indexOf(marker, at + marker.length);
          }
          tail = text.slice(-marker.length);
        });
      }),
    );
  }
  await Promise.all(started);
  return {
    close: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

/**
 * Live streams (GET /v0/changes): from a pipeline's status committed (by another connection, as the
 * scheduler's) to the message read by every client, with 1, 100 and 500 streams open; the server's
 * memory per idle stream; changes fanned out per second to 100 streams.
 */
export async function streams(context: Context): Promise<Row[]> {
  const server = await startPipewright(context.dir('streams'));
  try {
    const projectId = await installProject(server, 'streams', [
      trivialTask,
      { type: 'pipeline', version: 1, name: 'one', data: { concurrent: true, tasks: [{ task: 'noop' }] } },
      { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['one'] } },
    ]);
    const admin = server.client(projectId);
    const commandId = await resourceId(admin, 'command', 'go');
    const pipelines: string[] = [];
    for (let n = 0; n < 200; n += 1) {
      const { data } = await admin.POST('/commands/id/{id}/execute', {
        params: { path: { id: commandId } },
        body: {},
      });
      pipelines.push(data?.pipeline_ids[0] as string);
    }
    const db = new Database(join(server.dataDir, DATABASE_FILE));
    db.pragma('busy_timeout = 5000');
    const unfinished = db.prepare<[], { n: number }>(
      `SELECT count(*) AS n FROM pipelines WHERE status IN ('created', 'started')`,
    );
    await until(() => unfinished.get()?.n === 0, 120_000);
    // A finished pipeline's status flipped by hand: a change committed by another connection.
    const flip = db.prepare<[string]>(
      `UPDATE pipelines SET status = CASE status WHEN 'successful' THEN 'failed' ELSE 'successful' END WHERE id = ?`,
    );
    const keys = [server.apiKey];
    for (let n = 1; n < 5; n += 1) keys.push(await newKey(server, n));
    const rows: Row[] = [];

    for (const count of [1, 100, 500]) {
      const target = pipelines[0] as string;
      let committedAt = 0;
      let pending = 0;
      const latencies: number[] = [];
      const idleBefore = server.rssMiB();
      const open = await openStreams(
        server.baseUrl,
        keys,
        projectId,
        count,
        `&pipeline_id=${target}`,
        'pipeline',
        () => {
          latencies.push(wallClockMs() - committedAt);
          pending -= 1;
        },
      );
      if (count === 500) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const perStreamKiB = ((server.rssMiB() - idleBefore) * 1024) / count;
        rows.push({
          benchmark: 'streams',
          metric: `server memory per open idle stream (${count} open)`,
          ours: perStreamKiB,
          unit: 'KiB',
          goal: '< 20 KiB',
          met: perStreamKiB < 20,
        });
      }
      const samples = context.quick ? 20 : count === 500 ? 60 : 150;
      context.log(`${samples} changes read by ${count} streams`);
      for (let n = 0; n < samples; n += 1) {
        pending = count;
        flip.run(target);
        committedAt = wallClockMs();
        await until(() => pending <= 0, 30_000, 1);
        // A pause between changes, so that each is measured alone.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      open.close();
      for (const [p, goal] of [
        [50, 5],
        [99, 25],
      ] as const) {
        const value = percentile(latencies, p);
        rows.push({
          benchmark: 'streams',
          metric: `status committed -> message read, ${count} stream${count > 1 ? 's' : ''}, p${p}`,
          ours: value,
          unit: 'ms',
          ...(count === 500 ? { goal: `< ${goal} ms`, met: value < goal } : {}),
        });
      }
    }

    // Fan-out: changes of 200 pipelines in turn, as fast as one connection commits them, to 100
    // streams; what a batch of the feed holds twice (the same pipeline) is sent once, as its latest.
    const seconds = context.quick ? 2 : 5;
    context.log(`changes committed for ${seconds} s, fanned out to 100 streams`);
    let received = 0;
    let lastReceived = 0;
    const open = await openStreams(server.baseUrl, keys, projectId, 100, '', 'pipeline', () => {
      received += 1;
      lastReceived = wallClockMs();
    });
    const began = wallClockMs();
    let committed = 0;
    while (wallClockMs() - began < seconds * 1000) {
      for (let n = 0; n < 20; n += 1) flip.run(pipelines[committed++ % pipelines.length] as string);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Until the messages stop coming: 200 ms without one.
    await until(() => wallClockMs() - lastReceived > 200, 60_000, 10);
    open.close();
    db.close();
    rows.push({
      benchmark: 'streams',
      metric: `messages fanned out per second to 100 streams (${committed.toLocaleString('en')} changes committed in ${seconds} s)`,
      ours: received / ((lastReceived - began) / 1000),
      unit: 'msg/s',
    });
    return rows;
  } finally {
    await server.stop();
  }
}
