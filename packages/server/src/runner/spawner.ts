import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { errorMessage, type ProcessEnd, type ProcessOptions } from './process.js';
import {
  encodeRequest,
  errnoName,
  type FromSpawner,
  frameReader,
  NulByteError,
  type SpawnerEnd,
  signalName,
  type ToSpawner,
} from './spawner-protocol.js';

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

/** The spawner process and the runs it owns. */
interface Instance {
  child: ChildProcess;
  runs: Map<number, Run>;
  /** Closed by us, not dead. */
  closing: boolean;
  exited: Promise<void>;
}

export interface Spawner {
  /**
   * Runs one process in its own process group and settles once it has exited and its output is
   * closed.
   *
   * - When the process exits by itself, what it left running in its group is killed: nothing of a
   *   step outlives it, and leftovers would otherwise keep the output pipe (and the step) open.
   * - On abort the group gets SIGTERM, then SIGKILL after `graceMs` unless the output has closed by
   *   then (so children still cleaning up after the main process died get the same grace).
   * - argv is never parsed by a shell; stderr is merged into stdout.
   *
   * The process is spawned, and owned until it ends, by the spawner process (spawner-child.c),
   * which keeps the cost of forking off this process's thread.
   */
  run(options: ProcessOptions): Promise<ProcessEnd>;
  /**
   * Keeps the spawner process up (starting it now, so that the first step does not wait for it)
   * until the returned release is called; release resolves once it is gone. Without a holder, it
   * is started on demand and stops when its last run ends.
   */
  hold(): () => Promise<void>;
}

/**
 * How the spawner process starts. As root, with no new privileges: the steps it spawns inherit the
 * flag, so a set-user-id file (one a task user made, say) gives a step nothing (SECURITY.md,
 * finding 10); a root server's steps run as task users or as root, neither of which needs it. Not
 * as root, without: steps may use `sudo`.
 */
const spawnerArguments = (): string[] => (process.getuid?.() === 0 ? ['--no-new-privs'] : []);

/**
 * The server side of the spawner (spawner-child.c): a thin client that starts the spawner process
 * when needed, sends it each run and hands back what it reports. It is started with none of the
 * server's environment, in a session of its own (a Ctrl-C meant for the server must not kill it).
 * When it dies, the runs it owned end: their process groups are killed, and later runs go to a new
 * one. A runner owns one, which is enough: a spawn costs it well under a millisecond (it forks a
 * small process).
 */
export function createSpawner(executable: () => string = builtExecutable): Spawner {
  /** The spawner process up and taking runs. */
  let live: Instance | undefined;
  let holders = 0;
  let nextId = 1;

  const send = (instance: Instance, message: ToSpawner) => {
    // A failed write means the spawner is gone: its 'close' ends the runs.
    instance.child.stdin?.write(encodeRequest(message));
  };

  const start = (): Instance => {
    const child = spawn(executable(), spawnerArguments(), {
      env: {},
      detached: true,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let markExited: () => void = () => undefined;
    const instance: Instance = {
      child,
      runs: new Map(),
      closing: false,
      exited: new Promise((resolve) => {
        markExited = resolve;
      }),
    };
    const died = (cause: string) => {
      if (live === instance) live = undefined;
      markExited();
      if (!instance.closing) endRuns(instance, `the step spawner (pid ${child.pid}) ${cause}`);
    };
    const read = frameReader((message) => onMessage(instance, message));
    child.stdout?.on('data', (chunk: Buffer) => {
      try {
        read(chunk);
      } catch (error) {
        // Out of step with what it sends: it cannot be trusted with its runs any more.
        process.stderr.write(`pipewright: ${errorMessage(error)}; stopping the step spawner\n`);
        child.kill('SIGKILL');
      }
    });
    child.stdin?.on('error', () => undefined); // the spawner is gone: 'close' says how
    // Once it has exited and everything it wrote has been read.
    child.on('close', (code, signal) =>
      died(signal ? `was killed by signal ${signal}` : `exited with status ${code}`),
    );
    child.on('error', (error) => {
      // Only a spawner that could not be spawned at all gets no 'close'.
      if (child.pid === undefined) died(`could not start: ${error.message}`);
    });
    unref(child);
    live = instance;
    return instance;
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
        run.end(processEnd(message.end, run.options.argv[0] ?? ''));
        break;
    }
  };

  /** Stops the spawner process when it runs nothing and nothing holds it. */
  const closeIfUnused = (): Promise<void> => {
    const instance = live;
    if (holders > 0 || !instance || instance.runs.size > 0) return Promise.resolve();
    live = undefined;
    instance.closing = true;
    // Its exit is awaited (a server stopping waits for it): until then it keeps the loop alive.
    ref(instance.child);
    instance.child.stdin?.end(); // the end of its input is its signal to exit
    return instance.exited;
  };

  const run = (options: ProcessOptions): Promise<ProcessEnd> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      let request: Buffer;
      try {
        request = encodeRequest({
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
      } catch (error) {
        if (!(error instanceof NulByteError)) throw error;
        resolve({ kind: 'not_started', message: error.message });
        return;
      }
      let instance: Instance;
      try {
        instance = live ?? start();
      } catch (error) {
        resolve({ kind: 'not_started', message: `the step spawner could not start: ${String(error)}` });
        return;
      }
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
      instance.child.stdin?.write(request);
      if (options.signal.aborted) onAbort();
      else options.signal.addEventListener('abort', onAbort, { once: true });
    });

  return {
    run,
    hold() {
      holders += 1;
      try {
        live ??= start();
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

/** A run's end as the spawner reports it, with its numbers named as Node names them. */
function processEnd(end: SpawnerEnd, file: string): ProcessEnd {
  switch (end.kind) {
    case 'exited':
      return end;
    case 'signaled':
      return { kind: 'signaled', signal: signalName(end.signal), aborted: end.aborted };
    case 'not_started':
      // As Node words a failed spawn.
      return { kind: 'not_started', message: `spawn ${file} ${errnoName(end.errno)}` };
  }
}

/** An idle spawner does not keep the server's event loop alive; one running processes does. */
function ref(child: ChildProcess): void {
  child.ref();
  for (const pipe of [child.stdin, child.stdout]) (pipe as Socket | null)?.ref();
}

function unref(child: ChildProcess): void {
  child.unref();
  for (const pipe of [child.stdin, child.stdout]) (pipe as Socket | null)?.unref();
}

/**
 * The spawner is the program built from spawner-child.c (dist/runner/pipewright-spawner, exported
 * as '@pipewright/server/spawner'), also when the server itself runs from its TypeScript sources,
 * as under vitest: tests run after the build.
 */
function builtExecutable(): string {
  return createRequire(import.meta.url).resolve('@pipewright/server/spawner');
}
