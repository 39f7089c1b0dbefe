import { once } from 'node:events';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Context, Row } from '../lib/context.js';
import { databaseTarget, one, writerOf } from '../lib/database.js';
import {
  installProject,
  resourceId,
  SERVERS_DIR,
  startPipewright,
  trivialTask,
  until,
} from '../lib/pipewright.js';
import { type ServerProcess, startServer } from '../lib/processes.js';
import { percentile } from '../lib/stats.js';
import { nowMs, openStreams, type Readers, startReaders, streamKeys } from './streams-readers.js';

/** The totals of `readers` once the messages stop coming: 200 ms without one (within `timeoutMs`). */
async function quiet(readers: Readers, timeoutMs: number) {
  const began = nowMs();
  let totals = await readers.totals();
  while (nowMs() - totals.lastArrival <= 200) {
    if (nowMs() - began > timeoutMs) throw new Error('the messages did not stop in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
    totals = await readers.totals();
  }
  return totals;
}

/** From each of `samples` commits to its message read on every stream of `readers`, in ms. */
async function latencies(readers: Readers, samples: number, commit: () => Promise<void>): Promise<number[]> {
  const measured: number[] = [];
  for (let n = 0; n < samples; n += 1) {
    const arrived = readers.expectOneEach(30_000);
    await commit();
    const committedAt = nowMs();
    for (const at of await arrived) measured.push(at - committedAt);
    // A pause between changes, so that each is measured alone; of a random length, so that commits
    // fall anywhere between two of the server's checks.
    await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 10));
  }
  return measured;
}

/**
 * From a byte sent to servers/fanout-floor.ts to its message read on each of `count` streams, in
 * ms, `samples` times, with the servers `stopped` stopped meanwhile: what a fan-out costs this
 * machine, whoever the server.
 */
async function fanOutFloor(data: string, count: number, samples: number, stopped: ServerProcess[]) {
  const floor = await startServer([join(SERVERS_DIR, 'fanout-floor.js'), data]);
  for (const other of stopped) other.child.kill('SIGSTOP');
  try {
    const { hostname, port } = new URL(floor.baseUrl);
    const readers = await startReaders(
      { port: Number(port), host: hostname, marker: 'event: pipeline\n', timed: true },
      Array.from({ length: count }, () => `GET / HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`),
    );
    const trigger = connect({ port: Number(port), host: hostname, noDelay: true });
    await once(trigger, 'connect');
    trigger.write('TRIGGER');
    await once(trigger, 'data');
    const measured = await latencies(readers, samples, async () => {
      trigger.write('x');
    });
    trigger.destroy();
    await readers.close();
    return measured;
  } finally {
    for (const other of stopped) other.child.kill('SIGCONT');
    await floor.stop();
  }
}

/**
 * Live streams (GET /v0/changes): from a pipeline's status committed (by another connection, as the
 * scheduler's) to the message read by every client, with 1, 100 and 500 streams open, against a bare
 * node:http server streaming the same database (servers/fanout.ts); the server's memory per idle
 * stream; changes fanned out per second to 100 streams.
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
    // A connection of the benchmark's, which commits as the scheduler's would (lib/database.ts).
    const db = writerOf(server);
    const unfinished = `SELECT count(*) AS n FROM pipelines WHERE status IN ('created', 'started')`;
    await until(async () => Number((await one<{ n: number }>(db, unfinished))?.n) === 0, 120_000);
    // A finished pipeline's status flipped by hand: a change committed by another connection.
    const flip = (id: string) =>
      db.run(
        `UPDATE pipelines SET status = CASE status WHEN 'successful' THEN 'failed' ELSE 'successful' END WHERE id = ?`,
        id,
      );
    const keys = await streamKeys(server, 500);
    const changes = `/v0/changes?project_id=${projectId}`;
    const rows: Row[] = [];

    // Ours and the baseline in turn, with the same readers and the same commits. Each is stopped
    // (SIGSTOP) during the other's turn: the baseline's checks of the database every 2 ms, and its
    // reads of each commit, would take the CPU from ours during ours, and the other way round.
    const bare = await startServer([join(SERVERS_DIR, 'fanout.js'), databaseTarget(server)]);
    const target = pipelines[0] as string;
    const commit = () => flip(target);
    const open = (to: ServerProcess, count: number) =>
      openStreams(to.baseUrl, keys, `${changes}&pipeline_id=${target}`, count, 'pipeline', true);
    let oursAt500: number[] = [];
    try {
      for (const count of [1, 100, 500]) {
        const samples = context.quick ? 20 : count === 500 ? 60 : 150;
        context.log(`${samples} changes read by ${count} streams, of Pipewright and of the baseline`);
        const measured = { ours: [] as number[], bare: [] as number[] };
        const memory = { ours: 0, bare: 0 };
        for (const [name, to, other] of [
          ['ours', server, bare],
          ['bare', bare, server],
        ] as const) {
          other.child.kill('SIGSTOP');
          to.child.kill('SIGCONT');
          const idle = to.rssMiB();
          const readers = await open(to, count);
          // A server stopped during the other's turn catches up on what was committed meanwhile
          // (the baseline on PostgreSQL sends it): measured once that is over.
          await quiet(readers, 30_000);
          if (count === 500) {
            await new Promise((resolve) => setTimeout(resolve, 1000));
            memory[name] = ((to.rssMiB() - idle) * 1024) / count;
          }
          measured[name] = await latencies(readers, samples, commit);
          await readers.close();
        }
        server.child.kill('SIGCONT');
        if (count === 500) {
          oursAt500 = measured.ours;
          rows.push({
            benchmark: 'streams',
            metric: `server memory per open idle stream (${count} open)`,
            ours: memory.ours,
            baseline: memory.bare,
            baselineName: 'node:http',
            ratio: memory.ours / memory.bare,
            unit: 'KiB',
            goal: '< 20 KiB',
            met: memory.ours < 20,
          });
        }
        for (const [p, goal] of [
          [50, 5],
          [99, 25],
        ] as const) {
          const [ours, baseline] = [percentile(measured.ours, p), percentile(measured.bare, p)];
          rows.push({
            benchmark: 'streams',
            metric: `status committed -> message read, ${count} stream${count > 1 ? 's' : ''}, p${p}`,
            ours,
            baseline,
            baselineName: 'node:http SSE',
            ratio: ours / baseline,
            unit: 'ms',
            ...(count === 500 ? { goal: `< ${goal} ms`, met: ours < goal } : {}),
          });
        }
      }
      // The machine's floor at 500 streams, ours and the baseline stopped: the same readers, a
      // message of the same size written by a bare loop at a byte of the benchmark's.
      const { data: shown } = await admin.GET('/pipelines/id/{id}', { params: { path: { id: target } } });
      const floor = await fanOutFloor(JSON.stringify(shown), 500, context.quick ? 20 : 60, [server, bare]);
      for (const p of [50, 99]) {
        const [ours, baseline] = [percentile(oursAt500, p), percentile(floor, p)];
        rows.push({
          benchmark: 'streams',
          metric: `status committed -> message read, 500 streams, p${p}, against the machine's floor`,
          ours,
          baseline,
          baselineName: 'node:net write loop',
          ratio: ours / baseline,
          unit: 'ms',
        });
      }
    } finally {
      bare.child.kill('SIGCONT');
      server.child.kill('SIGCONT');
      await bare.stop();
    }

    // Fan-out: changes of 200 pipelines in turn, as fast as one connection commits them, to 100
    // streams; what a batch of the feed holds twice (the same pipeline) is sent once, as its latest.
    const seconds = context.quick ? 2 : 5;
    context.log(`changes committed for ${seconds} s, fanned out to 100 streams`);
    const fanOut = await openStreams(server.baseUrl, keys, changes, 100, 'pipeline', false);
    const began = nowMs();
    let committed = 0;
    while (nowMs() - began < seconds * 1000) {
      for (let n = 0; n < 20; n += 1) await flip(pipelines[committed++ % pipelines.length] as string);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const totals = await quiet(fanOut, 60_000);
    await fanOut.close();
    await db.close();
    // Idle: the server's CPU while one stream is open and nothing changes, against none open.
    const idleSeconds = context.quick ? 2 : 5;
    const cpuPercent = async () => {
      const before = server.cpuMs();
      await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
      return (server.cpuMs() - before) / (idleSeconds * 10);
    };
    context.log(`the server idle for ${idleSeconds} s, with no stream open, then one`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const withNone = await cpuPercent();
    const idle = await openStreams(server.baseUrl, keys, changes, 1, 'pipeline', false);
    const withOne = await cpuPercent();
    await idle.close();
    rows.push({
      benchmark: 'streams',
      metric: `messages fanned out per second to 100 streams (${committed.toLocaleString('en')} changes committed in ${seconds} s)`,
      ours: totals.received / ((totals.lastArrival - began) / 1000),
      unit: 'msg/s',
    });
    rows.push({
      benchmark: 'streams',
      metric: `server CPU over ${idleSeconds} s with one idle stream open`,
      ours: withOne,
      baseline: withNone,
      baselineName: 'none open',
      ratio: withOne / withNone,
      unit: '% of a core',
    });
    return rows;
  } finally {
    await server.stop();
  }
}
