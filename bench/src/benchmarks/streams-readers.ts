import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { databaseArgs, type Pipewright, SERVER_BIN } from '../lib/pipewright.js';

/** What a reader thread is given: its streams' requests, and the marker of the messages it counts. */
export interface ReaderSetup {
  port: number;
  host: string;
  requests: string[];
  marker: string;
  /** Whether it keeps each arrival's time (else it only counts them). */
  timed: boolean;
}
/** From the benchmark to a reader: wait for `count` arrivals; report the totals; close. */
export type ToReader = { type: 'expect'; count: number } | { type: 'totals' } | { type: 'close' };
export type FromReader =
  | { type: 'ready' }
  | { type: 'arrivals'; times: number[] }
  | { type: 'totals'; received: number; lastArrival: number }
  | { type: 'failed'; message: string };

/** Monotonic time in ms, the same clock in every thread of the process. */
export const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Reader threads, one per CPU, each the client of a share of the streams. 500 clients are 500
 * processes in a real deployment, on other machines; here they share the server's machine, and one
 * event loop reading 500 sockets in turn would time the last one after all the others' reads,
 * measuring itself more than the server. Each arrival is timed by the thread that reads it, as the
 * bytes come; the messages are looked for in the raw bytes, with no parsing.
 */
export async function startReaders(setup: Omit<ReaderSetup, 'requests'>, requests: readonly string[]) {
  const threads = Math.min(availableParallelism(), requests.length);
  const workers: { worker: Worker; count: number }[] = [];
  for (let n = 0; n < threads; n += 1) {
    const share = requests.filter((_, index) => index % threads === n);
    const worker = new Worker(new URL('./streams-reader.js', import.meta.url), {
      workerData: { ...setup, requests: share } satisfies ReaderSetup,
    });
    workers.push({ worker, count: share.length });
  }
  /** The next message of each worker of type `type`; a failure of any rejects. */
  const next = <T extends FromReader['type']>(worker: Worker, type: T) =>
    new Promise<Extract<FromReader, { type: T }>>((resolve, reject) => {
      const onMessage = (message: FromReader) => {
        if (message.type !== type && message.type !== 'failed') return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        if (message.type === 'failed') reject(new Error(`a stream failed: ${message.message}`));
        else resolve(message as Extract<FromReader, { type: T }>);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  const send = (worker: Worker, message: ToReader) => worker.postMessage(message);

  await Promise.all(workers.map(({ worker }) => next(worker, 'ready')));
  return {
    /**
     * Arms the readers for the next message on every stream; resolves with the arrival times, or
     * fails after `timeoutMs`.
     */
    expectOneEach(timeoutMs: number): Promise<number[]> {
      const arrived = workers.map(({ worker, count }) => {
        const reported = next(worker, 'arrivals');
        send(worker, { type: 'expect', count });
        return reported;
      });
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error('a message did not reach every stream in time')),
          timeoutMs,
        );
      });
      return Promise.race([Promise.all(arrived), late])
        .then((reports) => reports.flatMap((report) => report.times))
        .finally(() => clearTimeout(timer));
    },
    /** Messages read so far on all streams, and when the last arrived. */
    async totals(): Promise<{ received: number; lastArrival: number }> {
      const reports = await Promise.all(
        workers.map(({ worker }) => {
          const reported = next(worker, 'totals');
          send(worker, { type: 'totals' });
          return reported;
        }),
      );
      return {
        received: reports.reduce((sum, report) => sum + report.received, 0),
        lastArrival: Math.max(...reports.map((report) => report.lastArrival)),
      };
    },
    async close(): Promise<void> {
      await Promise.all(
        workers.map(({ worker }) => {
          const exited = new Promise((resolve) => worker.once('exit', resolve));
          send(worker, { type: 'close' });
          return exited;
        }),
      );
    },
  };
}

export type Readers = Awaited<ReturnType<typeof startReaders>>;

/** The server's cap of streams per key (its default): the streams are spread over keys. */
const STREAMS_PER_KEY = 100;

/**
 * Keys enough for `streams` streams of the default organization: the server's first key, then those
 * of new accounts, made by the server program's admin command.
 */
export async function streamKeys(server: Pipewright, streams: number): Promise<string[]> {
  const keys = [server.apiKey];
  for (let n = 1; n < Math.ceil(streams / STREAMS_PER_KEY); n += 1) {
    const { stdout } = await promisify(execFile)(process.execPath, [
      SERVER_BIN,
      'create-account',
      '--organization',
      'default',
      '--email',
      `streams-${n}@bench.test`,
      '--role',
      'user',
      ...databaseArgs(server),
    ]);
    keys.push(stdout.trim().split('\n').at(-1) as string);
  }
  return keys;
}

/**
 * `count` streams of `path` (`/v0/changes?project_id=...`, say) on raw connections, spread over
 * keys, read by reader threads (streams-reader.ts) that time or count the messages of type
 * `event`: the lightest client one process can be for hundreds of streams (the typed client's
 * parsing would weigh on the figures as much as the server). A baseline takes the same requests
 * and ignores what they ask.
 */
export function openStreams(
  baseUrl: string,
  keys: string[],
  path: string,
  count: number,
  event: string,
  timed: boolean,
) {
  const { hostname, port } = new URL(baseUrl);
  const requests = Array.from(
    { length: count },
    (_, n) =>
      `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n` +
      `Authorization: Bearer ${keys[Math.floor(n / STREAMS_PER_KEY)]}\r\n\r\n`,
  );
  return startReaders({ port: Number(port), host: hostname, marker: `event: ${event}\n`, timed }, requests);
}
