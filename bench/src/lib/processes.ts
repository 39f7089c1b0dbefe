import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface ServerProcess {
  child: ChildProcess;
  /** The base URL it announced (without /v0). */
  baseUrl: string;
  /** Resident memory now, in MiB. */
  rssMiB(): number;
  /** CPU time it has used so far, its threads' user and system time, in ms. */
  cpuMs(): number;
  stop(): Promise<void>;
}

/**
 * Starts a server process and waits (at most 60 s) for its JSON "listening" log line on
 * stderr, the format of pipewright-server, which the baseline servers imitate.
 */
export function startServer(argv: string[], env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, argv, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let buffered = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start: ${buffered}`));
    }, 60_000);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${buffered}`));
    };
    child.once('exit', onExit);
    child.stderr?.on('data', (chunk: Buffer) => {
      if (buffered === undefined) return;
      buffered += chunk.toString();
      for (const line of buffered.split('\n')) {
        if (!line.includes('"listening"')) continue;
        const { url } = JSON.parse(line) as { url: string };
        clearTimeout(timer);
        child.off('exit', onExit);
        // Keep draining stderr (request logs) so that the server never blocks on it.
        child.stderr?.removeAllListeners('data');
        child.stderr?.resume();
        resolve({
          child,
          baseUrl: url.replace(/\/v0$/, ''),
          rssMiB: () => rssMiB(child.pid ?? 0),
          cpuMs: () => cpuMs(child.pid ?? 0),
          stop: () =>
            new Promise((done) => {
              // Ended already, by itself or killed (a killed child has a signal, no exit code).
              if (child.exitCode !== null || child.signalCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
        return;
      }
    });
  });
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
  return kib / 1024;
}

/** Ticks of CPU time per second in /proc (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

function cpuMs(pid: number): number {
  // The fields after the command's name, whose closing parenthesis ends it: utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}
