import type { operations, Schemas } from '@pipewright/types';
import type { ApiClient } from './client.js';
import { ApiError } from './errors.js';
import { serverSentEvents } from './event-stream.js';

/** A message of `GET /changes`: `start`, then `pipeline`, `task` and `event`, maybe `end`. */
export type ProjectChange = Schemas['ProjectChange'];
/** A message of `GET /tasks/id/{id}/output`: `start`, `task`, `output`, and `end` once the task has ended. */
export type TaskOutputMessage = Schemas['TaskOutput'];

export type ChangeFilters = NonNullable<operations['streamChanges']['parameters']['query']>;

export interface StreamOptions {
  /** Resume right after this id (the last one a previous stream gave), instead of from the start. */
  lastEventId?: string;
  /** Ends the stream: the iteration then finishes without an error. */
  signal?: AbortSignal;
  /** Wait before the first reconnection (default 500 ms), doubled on each failure in a row, up to 10 s. */
  retryMs?: number;
  /** Reconnections that may fail in a row before the last failure is thrown (default 20). */
  maxRetries?: number;
  /** Told each time the stream reconnects, with the id it resumes from. */
  onReconnect?: (lastEventId: string | undefined) => void;
}

type Message = { event: string; id: string; data: unknown };
type Open = (
  lastEventId: string | undefined,
  signal: AbortSignal | undefined,
) => Promise<ReadableStream<Uint8Array>>;

const MAX_RETRY_MS = 10_000;

/** An answer worth retrying: the server stopping or busy, or no answer at all (the network). */
function retryable(error: unknown): boolean {
  if (error instanceof ApiError) return error.status === 429 || error.status >= 500;
  return true;
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });
}

/**
 * Reads a stream of the API and yields its messages, reconnecting with `Last-Event-ID` when the
 * connection drops, the server ends the stream because it stops, or a reconnection is refused for
 * a while (429, 5xx): the messages go on where they stopped, none lost or repeated. It finishes
 * after an `end` for any other reason, or when `signal` aborts; an error answer that retrying
 * cannot change (401, 404...) is thrown, as is the last failure once `maxRetries` failed in a row.
 */
async function* follow<M extends Message>(open: Open, options: StreamOptions): AsyncGenerator<M> {
  const { signal } = options;
  const retryMs = options.retryMs ?? 500;
  const maxRetries = options.maxRetries ?? 20;
  let lastEventId = options.lastEventId;
  let failures = 0;
  for (let connection = 0; !signal?.aborted; connection += 1) {
    if (connection > 0) options.onReconnect?.(lastEventId);
    let failure: unknown;
    try {
      const body = await open(lastEventId, signal);
      const onId = (id: string) => {
        lastEventId = id;
      };
      for await (const sse of serverSentEvents(body, onId, signal)) {
        failures = 0;
        const message = { event: sse.event, id: sse.id ?? '', data: JSON.parse(sse.data) } as M;
        yield message;
        if (message.event === 'end' && (message.data as { reason?: string }).reason !== 'server_stopping')
          return;
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (!retryable(error)) throw error;
      failure = error;
    }
    if (failures >= maxRetries)
      throw failure ?? new Error(`the stream closed ${failures + 1} times in a row`);
    const retryAfter = failure instanceof ApiError ? Number(failure.headers.get('retry-after')) * 1000 : 0;
    await delay(Math.max(retryAfter || 0, Math.min(MAX_RETRY_MS, retryMs * 2 ** failures)), signal);
    failures += 1;
  }
}

/**
 * Follows the changes of the client's project (`GET /changes`): pipelines and tasks created or
 * changing status, events stored, optionally filtered.
 */
export function projectChanges(
  client: ApiClient,
  filters: ChangeFilters = {},
  options: StreamOptions = {},
): AsyncGenerator<ProjectChange> {
  return follow<ProjectChange>(async (lastEventId, signal) => {
    const { data } = await client.GET('/changes', {
      params: { query: filters, header: lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId } },
      parseAs: 'stream',
      ...(signal ? { signal } : {}),
    });
    if (!data) throw new Error('the stream answered without a body');
    return data;
  }, options);
}

/**
 * Follows the output of a task (`GET /tasks/id/{id}/output`), from `offset` bytes into it (default
 * 0): the task, the output so far, then the output as the steps print it, until the task has ended.
 */
export function taskOutput(
  client: ApiClient,
  taskId: string,
  offset?: number,
  options: StreamOptions = {},
): AsyncGenerator<TaskOutputMessage> {
  return follow<TaskOutputMessage>(async (lastEventId, signal) => {
    const { data } = await client.GET('/tasks/id/{id}/output', {
      params: {
        path: { id: taskId },
        query: offset === undefined ? {} : { offset },
        header: lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId },
      },
      parseAs: 'stream',
      ...(signal ? { signal } : {}),
    });
    if (!data) throw new Error('the stream answered without a body');
    return data;
  }, options);
}
