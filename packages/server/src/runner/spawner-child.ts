/**
 * The spawner process: started by the server (spawner.ts) with an IPC channel, it spawns the step
 * processes and owns them until they end, reporting back by messages (spawner-protocol.ts).
 *
 * Why a process of its own: spawning blocks the calling thread for the fork, whose cost grows with
 * the caller's memory. Forked from this small process, on the other core, it costs less and no
 * longer holds up the server's main thread. It must stay small: it imports nothing but Node's own
 * modules.
 *
 * argv[2] is a private directory (0700) for the socket that output connections are made on.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import type { ProcessEnd } from './process.js';
import { processIdentity } from './process-identity.js';
import type { FromSpawner, StartRequest, ToSpawner } from './spawner-protocol.js';

/**
 * After SIGKILL to its group, only a process that left the group (setsid) can still hold the output
 * open; it must not hold the step forever.
 */
const ORPHANED_OUTPUT_WAIT_MS = 2_000;

/**
 * A process is reported as spawned once it has run this long (or before its first output): most
 * trivial steps end first, and are reported only by their end.
 */
const SPAWNED_REPORT_DELAY_MS = 20;

/** Output connections kept ready, so that a spawn does not wait for one. */
const READY_CONNECTIONS = 4;

/**
 * A step's output is one connected pair of Unix sockets: the process gets `write` as both its
 * stdout and its stderr (so both arrive in one stream, in the order written), and we read `read`.
 * Node cannot make a socket pair, but it can connect to itself: the pairs are made on a socket in a
 * directory only this user can enter, and paired in order (connections are accepted in the order
 * they were made).
 */
interface OutputConnection {
  write: Socket;
  read: Socket;
}

const socketDirectory = process.argv[2];
if (process.send === undefined || socketDirectory === undefined) {
  process.stderr.write('spawner-child.js is started by the Pipewright server, with an IPC channel\n');
  process.exit(2);
}

const listener = createServer({ pauseOnConnect: true }, (read) => {
  const waiting = connecting.shift();
  if (waiting) waiting(read);
  else read.destroy(); // not one of ours
});
const socketPath = join(socketDirectory, 'output.sock');
const listening = new Promise<void>((resolve) => listener.listen(socketPath, resolve));
const connecting: ((read: Socket) => void)[] = [];
const ready: Promise<OutputConnection>[] = [];

function newConnection(): Promise<OutputConnection> {
  return listening.then(
    () =>
      new Promise((resolve, reject) => {
        const write = connect(socketPath);
        write.on('error', reject);
        connecting.push((read) => resolve({ write, read }));
      }),
  );
}

function takeConnection(): Promise<OutputConnection> {
  while (ready.length < READY_CONNECTIONS + 1) {
    const connection = newConnection();
    connection.catch(() => undefined); // reported to the run that takes it
    ready.push(connection);
  }
  return ready.shift() as Promise<OutputConnection>;
}

interface Owned {
  abort(): void;
  kill(): void;
}

const owned = new Map<number, Owned>();

/** Sends a message; `onSent` runs once it is written. Returns false when the channel is backed up. */
function send(message: FromSpawner, onSent?: () => void): boolean {
  // Errors (the server gone) need no handling: 'disconnect' ends this process.
  return process.send?.(message, undefined, undefined, () => onSent?.()) ?? false;
}

/**
 * Sends `signal` to the process group. The group is often gone already (a step that left nothing
 * behind), and the error that says so is not worth a stack trace each time.
 */
function signalGroup(group: number, signal: NodeJS.Signals): void {
  const { stackTraceLimit } = Error;
  Error.stackTraceLimit = 0;
  try {
    process.kill(-group, signal);
  } catch {
    // The group is already gone.
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/**
 * Spawns argv itself, with the output connection as stdout and stderr, in a new session (hence a
 * process group of its own that can be stopped whole), with exactly the environment given. A file
 * the kernel cannot execute (no #! line) is run by /bin/sh, as execvp and the shells do; argv is
 * still not parsed by the shell.
 */
function spawnStep(request: StartRequest, output: Socket): ChildProcess {
  const options = {
    cwd: request.cwd,
    env: request.environment,
    detached: true,
    stdio: ['ignore', output, output] as ['ignore', Socket, Socket],
    // libuv drops the supplementary groups (setgroups) before it sets these.
    ...(request.user ? { uid: request.user.uid, gid: request.user.gid } : {}),
  };
  const [file = '', ...args] = request.argv;
  try {
    return spawn(file, args, options);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOEXEC') throw error;
    return spawn('/bin/sh', [file, ...args], options);
  }
}

/**
 * Runs one process in its own process group and reports its end once it has exited and its output
 * is closed.
 *
 * - When the process exits by itself, what it left running in its group is killed: nothing of a step
 *   outlives it, and leftovers would otherwise keep the output open (and the step running).
 * - On abort the group gets SIGTERM, then SIGKILL after `graceMs` unless the output has closed by then
 *   (so children still cleaning up after the main process died get the same grace).
 * - Output is sent back up to `forwardBytes`, pausing while the channel is backed up; the rest is
 *   read and dropped, so that a step printing gigabytes neither blocks nor floods the server.
 */
async function start(id: number, request: StartRequest): Promise<void> {
  // An abort or a kill can come while the output connection is made: it is applied once spawned.
  let early: keyof Owned | undefined;
  owned.set(id, {
    abort: () => {
      early ??= 'abort';
    },
    kill: () => {
      early = 'kill';
    },
  });
  let connection: OutputConnection;
  let child: ChildProcess;
  try {
    connection = await takeConnection();
  } catch (error) {
    owned.delete(id);
    send({ type: 'end', id, end: { kind: 'not_started', message: (error as Error).message } });
    return;
  }
  const { write, read } = connection;
  try {
    child = spawnStep(request, write);
  } catch (error) {
    // e.g. a variable holding a NUL byte
    owned.delete(id);
    read.destroy();
    send({ type: 'end', id, end: { kind: 'not_started', message: (error as Error).message } });
    return;
  } finally {
    write.destroy(); // the process has its own copy
  }

  const { pid } = child;
  let aborted = false;
  let exit: { exitCode: number | null; signal: NodeJS.Signals | null } | undefined;
  let outputClosed = false;
  let settled = false;
  let forwardable = request.forwardBytes;
  let graceTimer: NodeJS.Timeout | undefined;
  let orphanedOutputTimer: NodeJS.Timeout | undefined;
  let reported = pid === undefined;
  const reportSpawned = () => {
    if (reported || exit || pid === undefined) return;
    reported = true;
    clearTimeout(reportTimer);
    // Not reaped yet (no exit seen), so the pid still names this process.
    const identity = processIdentity(pid);
    send({ type: 'spawned', id, pid, ...(identity === undefined ? {} : { identity }) });
  };
  const reportTimer = reported ? undefined : setTimeout(reportSpawned, SPAWNED_REPORT_DELAY_MS);

  let killed = false;
  const killGroup = (signal: NodeJS.Signals) => {
    if (pid === undefined || killed) return;
    killed = signal === 'SIGKILL';
    signalGroup(pid, signal);
  };
  const killNow = () => {
    killGroup('SIGKILL');
    orphanedOutputTimer ??= setTimeout(() => read.destroy(), ORPHANED_OUTPUT_WAIT_MS);
  };
  const abort = () => {
    if (aborted) return;
    aborted = true;
    killGroup('SIGTERM');
    graceTimer = setTimeout(killNow, request.graceMs);
  };
  const settle = (end: ProcessEnd) => {
    if (settled) return;
    settled = true;
    owned.delete(id);
    clearTimeout(reportTimer);
    clearTimeout(graceTimer);
    clearTimeout(orphanedOutputTimer);
    killGroup('SIGKILL');
    read.destroy();
    send({ type: 'end', id, end });
  };
  const settleWhenDone = () => {
    if (!exit || !outputClosed) return;
    settle(
      exit.signal !== null
        ? { kind: 'signaled', signal: exit.signal, aborted }
        : { kind: 'exited', exitCode: exit.exitCode ?? -1, aborted },
    );
  };

  const handlers: Owned = { abort, kill: killNow };
  owned.set(id, handlers);
  read.on('data', (chunk: Buffer) => {
    reportSpawned();
    if (forwardable <= 0) return;
    const part = chunk.length > forwardable ? chunk.subarray(0, forwardable) : chunk;
    forwardable -= part.length;
    let written = false;
    let paused = false;
    const backedUp = !send({ type: 'output', id, chunk: part }, () => {
      written = true;
      if (paused) read.resume();
    });
    if (backedUp && !written) {
      paused = true;
      read.pause();
    }
  });
  read.on('error', () => undefined); // a reset ends the output like a close
  read.on('close', () => {
    outputClosed = true;
    settleWhenDone();
  });
  read.resume();
  // Emitted only when the process could not be spawned (no kill or IPC goes through `child`).
  child.on('error', (error) => settle({ kind: 'not_started', message: error.message }));
  child.on('exit', (exitCode, signal) => {
    exit = { exitCode, signal };
    if (!aborted) killNow();
    settleWhenDone();
  });
  if (early) handlers[early]();
}

process.on('message', (message: ToSpawner) => {
  if (message.type === 'start') void start(message.id, message.request);
  else if (message.type === 'abort') owned.get(message.id)?.abort();
  else owned.get(message.id)?.kill();
});
// The server is gone (stopped, or killed): so is its spawner, and the steps it still runs, whose
// tasks the next start ends as interrupted anyway (a stopping server ends its steps first). Crash
// recovery stops them by their recorded groups when this process was killed as well.
const shutDown = () => {
  for (const run of owned.values()) run.kill();
  rmSync(socketDirectory, { recursive: true, force: true });
  process.exit(0);
};
process.on('disconnect', shutDown);
// The server may have let go while this module loaded, before anyone listened for it.
if (!process.connected) shutDown();
