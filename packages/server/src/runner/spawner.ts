import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SEARCH_PATH, findExecutable } from './executable.js';
import type { ProcessEnd, ProcessOptions } from './process.js';
import type { FromSpawner, ToSpawner } from './spawner-protocol.js';

/**
 * Output sent back beyond the limit kept: 3 bytes can be an unfinished character, held back by the
 * decoder, so with 4 more the capture (OutputCapture) always sees that the output went past the limit
 * and keeps exactly what it would have kept of the whole output.
 */
const FORWARD_MARGIN_BYTES = 4;

interface Run {
  options: ProcessOptions;
  pid?: number;
  /** What the server side could not take (onSpawn or onOutput threw): the run rejects with it. */
  failure?: { error: unknown };
  end(end: ProcessEnd): void;
}

/** One spawner process and the runs it owns. */
interface Instance {
  child: ChildProcess;
  runs: Map<number, Run>;
  /** Closed by us, not dead. */
  closing: boolean;
  exited: Promise<void>;
}

export interface Spawner {
  /** Runs one process through a spawner process (see runProcess for what that means). */
  run(options: ProcessOptions): Promise<ProcessEnd>;
  /**
   * Keeps the spawner processes up (starting one now, so that the first step does not wait for it)
   * until the returned release is called; release resolves once they are gone. More are started
   * while all are busy, up to the size. Without a holder, a spawner process is started on demand
   * and stops when its last run ends.
   */
  hold(): () => Promise<void>;
}

/**
 * V8 as small as it goes for the spawner's little work: no background threads (their stacks and
 * heaps) and no optimizing compiler. Each spawn forks the spawner, at a cost that grows with its
 * mappings: with these, the machine's CPU per step process fell by 8-14% (three sets of
 * alternating runs; bench/README.md). `--no-expose-wasm` silences lite mode's warning.
 */
const SPAWNER_V8_FLAGS = ['--single-threaded', '--lite-mode', '--no-expose-wasm'];

/**
 * How a spawner process starts. As root, under `setpriv --no-new-privs` where there is one: the
 * steps it spawns inherit the flag, so a set-user-id file (one a task user made, say) gives a
 * step nothing (SECURITY.md, finding 10); a root server's steps run as task users or as root,
 * neither of which needs it. Not as root, as is: steps may use `sudo`.
 */
function launcher(): { execPath: string; execArgv: string[] } {
  const setpriv = process.getuid?.() === 0 ? findExecutable('setpriv', DEFAULT_SEARCH_PATH, '/') : undefined;
  return setpriv?.found
    ? { execPath: setpriv.path, execArgv: ['--no-new-privs', '--', process.execPath, ...SPAWNER_V8_FLAGS] }
    : { execPath: process.execPath, execArgv: SPAWNER_V8_FLAGS };
}

/**
 * The server side of the spawner (spawner-child.ts): a thin client that starts spawner processes
 * (at most `size`), sends each run to the least busy and hands back what it reports. They are forked
 * with neither the server's flags nor its environment, each in a session of its own (a Ctrl-C meant
 * for the server must not kill them). When one dies, the runs it owned end: their process groups
 * are killed, and later runs go to the others or to a new one.
 */
export function createSpawner(entry: () => string, size: number): Spawner {
  /** Spawner processes up and taking runs. */
  const live = new Set<Instance>();
  let holders = 0;
  let nextId = 1;

  const send = (instance: Instance, message: ToSpawner) => {
    // A failed send means the spawner is gone: its 'disconnect' ends the runs.
    instance.child.send(message, undefined, undefined, () => undefined);
  };

  const start = (): Instance => {
    // Where the spawner makes its output sockets: private to this user, removed with the spawner.
    const socketDir = mkdtempSync(join(tmpdir(), 'pipewright-spawner-'));
    const child = fork(entry(), [socketDir], {
      serialization: 'advanced',
      ...launcher(),
      env: {},
      detached: true,
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    let exitCause: string | undefined;
    let disconnected = false;
    let markExited: () => void = () => undefined;
    const instance: Instance = {
      child,
      runs: new Map(),
      closing: false,
      exited: new Promise((resolve) => {
        markExited = () => {
          rmSync(socketDir, { recursive: true, force: true });
          resolve();
        };
      }),
    };
    const died = (cause: string) => {
      live.delete(instance);
      if (!instance.closing) endRuns(instance, `the step spawner (pid ${child.pid}) ${cause}`);
    };
    child.on('message', (message: FromSpawner) => onMessage(instance, message));
    // Ended once the process has exited and every message it sent has been read.
    child.on('exit', (code, signal) => {
      exitCause = signal ? `was killed by signal ${signal}` : `exited with status ${code}`;
      markExited();
      if (disconnected) died(exitCause);
    });
    child.on('disconnect', () => {
      disconnected = true;
      if (exitCause !== undefined) died(exitCause);
    });
    child.on('error', (error) => {
      // Only a spawner that could not be spawned at all gets neither 'exit' nor 'disconnect'.
      if (child.pid !== undefined) return;
      markExited();
      died(`could not start: ${error.message}`);
    });
    unref(child);
    live.add(instance);
    return instance;
  };

  /** The least busy spawner process, started when all are busy and there are fewer than `size`. */
  const pick = (): Instance => {
    let best: Instance | undefined;
    for (const instance of live) if (!best || instance.runs.size < best.runs.size) best = instance;
    if (best && (best.runs.size === 0 || live.size >= size)) return best;
    return start();
  };

  /** The spawner is gone: its runs end, and their processes with them. */
  const endRuns = (instance: Instance, message: string) => {
    for (const run of instance.runs.values()) {
      if (run.pid === undefined) {
        run.end({ kind: 'not_started', message });
        continue;
      }
      try {
        process.kill(-run.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
      run.end({ kind: 'lost', message: `was killed: ${message}` });
    }
  };

  const onMessage = (instance: Instance, message: FromSpawner) => {
    const run = instance.runs.get(message.id);
    if (!run) return;
    // What onSpawn and onOutput throw is not the spawner's to handle: the process is killed, and
    // the run rejects with it once it has ended.
    const guarded = (report: () => void) => {
      if (run.failure) return;
      try {
        report();
      } catch (error) {
        run.failure = { error };
        send(instance, { type: 'kill', id: message.id });
      }
    };
    switch (message.type) {
      case 'spawned':
        run.pid = message.pid;
        guarded(() => run.options.onSpawn?.(message.pid, message.identity));
        break;
      case 'output':
        guarded(() => run.options.onOutput(message.chunk));
        break;
      case 'end':
        run.end(message.end);
        break;
    }
  };

  /** Stops the spawner processes that run nothing when nothing holds them. */
  const closeIfUnused = (): Promise<void> => {
    if (holders > 0) return Promise.resolve();
    const closing: Promise<void>[] = [];
    for (const instance of live) {
      if (instance.runs.size > 0) continue;
      live.delete(instance);
      instance.closing = true;
      instance.child.disconnect();
      closing.push(instance.exited);
    }
    return Promise.all(closing).then(() => undefined);
  };

  const run = (options: ProcessOptions): Promise<ProcessEnd> =>
    new Promise((resolve, reject) => {
      let instance: Instance;
      try {
        instance = pick();
      } catch (error) {
        resolve({ kind: 'not_started', message: `the step spawner could not start: ${String(error)}` });
        return;
      }
      const id = nextId++;
      const onAbort = () => send(instance, { type: 'abort', id });
      const record: Run = {
        options,
        end(end) {
          if (!instance.runs.delete(id)) return;
          options.signal.removeEventListener('abort', onAbort);
          if (instance.runs.size === 0) unref(instance.child);
          if (record.failure) reject(record.failure.error);
          else resolve(end);
          void closeIfUnused();
        },
      };
      instance.runs.set(id, record);
      if (instance.runs.size === 1) ref(instance.child);
      send(instance, {
        type: 'start',
        id,
        request: {
          argv: options.argv,
          environment: options.environment,
          cwd: options.cwd,
          graceMs: options.graceMs,
          ...(options.user ? { user: options.user } : {}),
          forwardBytes:
            options.outputLimitBytes === undefined
              ? Number.POSITIVE_INFINITY
              : options.outputLimitBytes + FORWARD_MARGIN_BYTES,
        },
      });
      if (options.signal.aborted) onAbort();
      else options.signal.addEventListener('abort', onAbort, { once: true });
    });

  return {
    run,
    hold() {
      holders += 1;
      try {
        if (live.size === 0) start();
      } catch {
        // Started again on the first run, which reports why it cannot.
      }
      let released = false;
      return () => {
        if (released) return Promise.resolve();
        released = true;
        holders -= 1;
        return closeIfUnused();
      };
    },
  };
}

/** An idle spawner does not keep the server's event loop alive; one running processes does. */
function ref(child: ChildProcess): void {
  child.ref();
  child.channel?.ref();
}

function unref(child: ChildProcess): void {
  child.unref();
  child.channel?.unref();
}

/**
 * The spawner process runs the built JavaScript (dist/runner/spawner-child.js, exported as
 * '@pipewright/server/spawner'), also when the server itself runs from its TypeScript sources, as
 * under vitest: tests run after the build.
 */
const resolveEntry = () => createRequire(import.meta.url).resolve('@pipewright/server/spawner');

/**
 * Spawner processes at most: a spawn holds its spawner for the whole fork and exec, so one per
 * core lets spawns run side by side; past 4, more would mostly cost memory (each is a Node process).
 */
const SPAWNER_PROCESSES = Math.min(availableParallelism(), 4);

/** The spawner of this process, shared by every runner and scheduler in it. */
export const spawner: Spawner = createSpawner(resolveEntry, SPAWNER_PROCESSES);
