import type { ApiClient } from '@pipewright/client';
import { type DatabaseView, one } from './database.js';
import { trivialTask, until } from './pipewright.js';

/**
 * The load of `events`, `postgres` and `instances`: custom events `bench` through one trigger
 * to a pipeline of one trivial task.
 */
export const INGEST_SPECS: unknown[] = [
  trivialTask,
  { type: 'pipeline', version: 1, name: 'one', data: { concurrent: true, tasks: [{ task: 'noop' }] } },
  {
    type: 'trigger',
    version: 1,
    name: 'on-bench',
    data: { connector: 'custom', event: 'bench', pipelines: ['one'] },
  },
];

const ENDED = `SELECT count(*) AS n FROM pipelines WHERE status IN ('successful', 'failed', 'aborted')`;
const UNSUCCESSFUL = `SELECT count(*) AS n FROM pipelines WHERE status <> 'successful'`;

/** Pipelines counted in a server's database itself, not through the API it loads. */
export interface PipelineCounts {
  ended(): Promise<number>;
  /** Ended or not, every pipeline that has not succeeded. */
  unsuccessful(): Promise<number>;
  close(): Promise<void>;
}

/** The counts of the database `view` reads (SQLite's or PostgreSQL's: database.ts); closing them closes it. */
export function pipelineCounts(view: DatabaseView): PipelineCounts {
  const count = async (sql: string) => Number((await one<{ n: number | string }>(view, sql))?.n ?? 0);
  return {
    ended: () => count(ENDED),
    unsuccessful: () => count(UNSUCCESSFUL),
    close: () => view.close(),
  };
}

export interface Ingestion {
  /** From the first event sent to the last one answered. */
  acceptedMs: number;
  /** From the first event sent to the last of their pipelines ended. */
  doneMs: number;
}

/**
 * Sends `events` custom events `bench`, `inFlight` at a time, the nth to `clients[n % length]`
 * (round robin over the servers given), then waits until as many more pipelines have ended, as
 * `counts` sees them (polled every 20 ms). Throws if an event is refused or a pipeline did not
 * succeed.
 */
export async function ingest(
  clients: ApiClient[],
  counts: PipelineCounts,
  events: number,
  inFlight = 8,
): Promise<Ingestion> {
  const before = await counts.ended();
  const started = performance.now();
  let sent = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (sent < events) {
        const n = sent;
        sent += 1;
        const client = clients[n % clients.length] as ApiClient;
        const { error } = await client.POST('/events', {
          body: { connector: 'custom', name: 'bench', data: { n: n + 1 } },
        });
        if (error) throw new Error(`event ${n + 1} refused: ${JSON.stringify(error)}`);
      }
    }),
  );
  const accepted = performance.now();
  await until(async () => (await counts.ended()) >= before + events, 600_000);
  const done = performance.now();
  if ((await counts.unsuccessful()) > 0) throw new Error('some pipelines did not succeed');
  return { acceptedMs: accepted - started, doneMs: done - started };
}

/** Pipelines completed per minute of an ingestion of `events`. */
export const perMinute = (events: number, ingestion: Ingestion) => (events / ingestion.doneMs) * 60_000;
