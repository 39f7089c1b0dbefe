import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { ApiClient } from '@pipewright/client';
import type { Context, Row } from '../lib/context.js';
import { installProject, resourceId, startPipewright } from '../lib/pipewright.js';
import { median } from '../lib/stats.js';

/** An image of busybox alone, made here: no registry is reachable. */
const IMAGE = 'localhost/pw-bench:latest';
const PODMAN = '/usr/bin/podman';
/** Podman as these machines run it (see packages/server/test/helpers/podman.ts): runc, cgroupfs, no ulimits. */
const CONTAINERS_CONF = `[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
`;

/** Wall-clock time in ms, comparable with the server's recorded times. */
const wallClockMs = () => performance.timeOrigin + performance.now();

/**
 * `container`: a container step's start, from the claim of its task (its recorded start) to its
 * process running in the container (it connects to a listener of ours), against `podman run` of
 * the same image and program, from the spawn to the same connection. Rounds alternate.
 */
export async function containerStart(context: Context): Promise<Row[]> {
  const dir = context.dir('container');
  const conf = join(dir, 'containers.conf');
  writeFileSync(conf, CONTAINERS_CONF);
  const env = { PATH: process.env.PATH ?? '', CONTAINERS_CONF: conf };
  if (spawnSync(PODMAN, ['image', 'exists', IMAGE], { env }).status !== 0) makeImage(dir, env);

  const arrivals = new Map<string, number>();
  const listener = await listen((token) => arrivals.set(token, wallClockMs()));
  const port = (listener.address() as { port: number }).port;
  const ping = (token: string) => `echo "${token}" | nc 127.0.0.1 ${port}`;
  const ours = await startPipewright(join(dir, 'data'), ['--container-engine', 'podman'], env);
  try {
    const projectId = await installProject(ours, 'container', [
      {
        type: 'task',
        version: 1,
        name: 'ping',
        data: {
          runtime: { name: 'container', parameters: { image: IMAGE, pull: 'never' } },
          steps: [{ code: ping('$PIPEWRIGHT_TASK_ID') }],
        },
      },
      { type: 'pipeline', version: 1, name: 'one', data: { tasks: [{ task: 'ping' }] } },
      { type: 'command', version: 1, name: 'go', data: { parameters: [], pipelines: ['one'] } },
    ]);
    const client = ours.client(projectId);
    const commandId = await resourceId(client, 'command', 'go');
    const rounds = context.quick ? 4 : 15;
    context.log(`${rounds} rounds of a container step, then podman run`);
    const oursMs: number[] = [];
    const bareMs: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const { data } = await client.POST('/commands/id/{id}/execute', {
        params: { path: { id: commandId } },
        body: {},
      });
      const pipelineId = data?.pipeline_ids[0] ?? '';
      const task = await endedTask(client, pipelineId);
      const arrived = arrivals.get(task?.id ?? '');
      if (arrived === undefined || !task?.start_time) throw new Error('the container step did not connect');
      oursMs.push(arrived - Date.parse(task.start_time));

      const token = `bare-${round}`;
      const before = wallClockMs();
      await new Promise<void>((resolve, reject) => {
        const child = spawn(PODMAN, ['run', '--rm', '--network', 'host', IMAGE, 'sh', '-c', ping(token)], {
          env,
          stdio: 'ignore',
        });
        child.once('error', reject);
        child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`podman run: ${code}`))));
      });
      const bareArrived = arrivals.get(token);
      if (bareArrived === undefined) throw new Error('podman run did not connect');
      bareMs.push(bareArrived - before);
    }
    const value = median(oursMs);
    const base = median(bareMs);
    return [
      {
        benchmark: 'container',
        metric: 'container step: claim -> its process running, median',
        ours: value,
        baseline: base,
        baselineName: 'podman run directly',
        ratio: value / base,
        unit: 'ms',
        goal: 'ratio <= 1.5',
        met: value / base <= 1.5,
      },
    ];
  } finally {
    await ours.stop();
    listener.close();
  }
}

/** The one task of a pipeline, once it has ended (polled, at most a minute). */
async function endedTask(client: ApiClient, pipelineId: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { data } = await client.GET('/tasks', { params: { query: { pipeline_id: pipelineId } } });
    const task = data?.elements[0];
    if (task?.end_time !== undefined) return task;
    if (Date.now() > deadline) throw new Error('the container task did not end in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A TCP listener on 127.0.0.1 that tells each connection's first line, then closes it. */
function listen(onToken: (token: string) => void): Promise<Server> {
  const server = createServer((socket) => {
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk;
      if (!text.includes('\n')) return;
      onToken(text.split('\n')[0] ?? '');
      socket.end();
    });
    socket.on('error', () => undefined);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** IMAGE from a root file system of /bin/busybox and its links. */
function makeImage(dir: string, env: Record<string, string>): void {
  const root = join(dir, 'rootfs');
  mkdirSync(join(root, 'bin'), { recursive: true });
  execFileSync('cp', ['/bin/busybox', join(root, 'bin', 'busybox')]);
  for (const applet of execFileSync('/bin/busybox', ['--list'], { encoding: 'utf8' }).split('\n')) {
    if (applet && applet !== 'busybox') symlinkSync('busybox', join(root, 'bin', applet));
  }
  const archive = join(dir, 'rootfs.tar');
  execFileSync('tar', ['-C', root, '-cf', archive, '.']);
  execFileSync(PODMAN, ['import', '--quiet', archive, IMAGE], { env });
}
