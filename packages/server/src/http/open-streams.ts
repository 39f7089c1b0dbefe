import { setImmediate as nextTurn } from 'node:timers/promises';
import { DomainError } from '../domain/errors.js';
import { type OpenStream, turnIsOver } from '../services/index.js';
import type { EventStream } from './event-stream.js';

export interface StreamLimits {
  /** Streams one API key may hold open at once; one more is 429 (default 100). */
  maxPerKey: number;
  /** A stream that sent nothing this long gets a heartbeat (default 15 s). */
  heartbeatMs: number;
  /** What may wait in the server for a consumer before it is cut off (default 1 MiB). */
  bufferBytes: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxPerKey: 100,
  heartbeatMs: 15_000,
  bufferBytes: 1024 * 1024,
};

/** How soon after the server starts stopping its streams end. */
const STOP_CHECK_MS = 1000;

/**
 * The streams open on this server: counted per key for the cap, sent heartbeats when idle, and
 * ended, each with `end`, once the server is stopping. One timer serves them all, and runs only
 * while some are open.
 */
export function createOpenStreams(limits: StreamLimits, isStopping: () => boolean = () => false) {
  const perKey = new Map<string, number>();
  const open = new Set<{ stream: OpenStream; events: EventStream }>();
  let timer: NodeJS.Timeout | undefined;

  // A tick is under way: with thousands of streams, it takes turns with other work.
  let ticking = false;
  const tick = async () => {
    if (ticking) return;
    ticking = true;
    try {
      const stopping = isStopping();
      const idleSince = Date.now() - limits.heartbeatMs;
      let served = 0;
      for (const entry of [...open]) {
        if (!stopping && entry.events.lastWrite() > idleSince) continue;
        if (turnIsOver(served)) await nextTurn();
        served += 1;
        if (stopping) entry.stream.end('server_stopping');
        else entry.events.heartbeat(entry.stream.position());
      }
    } finally {
      ticking = false;
    }
  };

  return {
    /**
     * Refuses a stream the server cannot take: it is stopping, or the key holds its most. Else
     * counts it for its key from now on, while it opens too (it reads the store), until the
     * returned function is called, which is safe to call more than once.
     */
    admit(keyId: string): () => void {
      if (isStopping()) {
        throw new DomainError('service_unavailable', 'the server is stopping; retry on another or later');
      }
      const count = perKey.get(keyId) ?? 0;
      if (count >= limits.maxPerKey) {
        throw new DomainError(
          'rate_limited',
          `this API key holds ${count} open streams, the most it may: close one, or retry later`,
          { retry_after_seconds: 5, open_streams: count },
        );
      }
      perKey.set(keyId, count + 1);
      let counted = true;
      return () => {
        if (!counted) return;
        counted = false;
        const left = (perKey.get(keyId) ?? 1) - 1;
        if (left === 0) perKey.delete(keyId);
        else perKey.set(keyId, left);
      };
    },
    /** Keeps an open stream for its heartbeats and the stop until `release`, safe to call more than once. */
    add(stream: OpenStream, events: EventStream): () => void {
      const entry = { stream, events };
      open.add(entry);
      timer ??= setInterval(tick, Math.min(STOP_CHECK_MS, limits.heartbeatMs));
      return () => {
        if (!open.delete(entry)) return;
        if (open.size === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
  };
}

export type OpenStreams = ReturnType<typeof createOpenStreams>;
