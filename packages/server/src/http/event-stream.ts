import type { Socket } from 'node:net';
import type { Response } from 'express';
import type { StreamMessage, StreamSink } from '../services/index.js';

/** A response that carries Server-Sent Events, as a stream's sink. */
export interface EventStream extends StreamSink {
  /** A comment that keeps proxies from closing an idle connection, with the stream's `id`. */
  heartbeat(id: string): void;
  /** When something was last written (Date.now()). */
  lastWrite(): number;
}

const HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  // Proxies that buffer responses (nginx) pass this one on as it comes.
  'X-Accel-Buffering': 'no',
};

/** A message's bytes as written: the event alone, and as one chunk of a chunked body. */
interface Framed {
  event: Buffer;
  chunk?: Buffer;
}

/** Messages as written, kept while the message lives: every stream of a change sends the same one. */
const framed = new WeakMap<StreamMessage, Framed>();
const frame = (message: StreamMessage): Framed => {
  let bytes = framed.get(message);
  if (!bytes) {
    bytes = { event: Buffer.from(`event: ${message.event}\nid: ${message.id}\ndata: ${message.data}\n\n`) };
    framed.set(message, bytes);
  }
  return bytes;
};
/** The bytes of `event` as a chunk of a body with `Transfer-Encoding: chunked`. */
const asChunk = (event: Buffer) =>
  Buffer.concat([Buffer.from(`${event.length.toString(16)}\r\n`), event, Buffer.from('\r\n')]);

/**
 * Writes a stream's messages to `res` as Server-Sent Events, the headers with the first. Writes
 * never wait: a consumer that stops reading has its messages kept in the server's buffers until
 * more than `bufferBytes` wait there (the response's and its socket's) when another comes, and is
 * then cut off, its connection destroyed, so that it holds no more memory and slows no one else.
 * A heartbeat carries the `id` too: an `id` field alone sets the consumer's Last-Event-ID without
 * making an event.
 *
 * Once the head is out, messages go straight to the connection's socket, framed once for every
 * stream (as a chunk when the body is chunked): a change fanned out to hundreds of streams costs
 * one socket write each, sent at once, where `res.write` would frame it anew for each and hold
 * every write until the fan-out ends (it corks the socket until the next tick). The messages of
 * one batch of changes go to a stream in one write.
 */
export function eventStream(res: Response, bufferBytes: number): EventStream {
  let last = Date.now();
  let closed = false;
  // The response's socket, once nothing of the response waits anywhere else (its head included).
  let socket: Socket | undefined;
  let chunked = false;
  const direct = (): Socket | undefined => {
    const candidate = res.socket;
    // A response holds bytes itself only until its socket is its own (a request pipelined behind
    // another); its writableLength counts those and its socket's. A HEAD answer has no body at all.
    if (
      candidate &&
      res.headersSent &&
      res.writableLength === candidate.writableLength &&
      res.locals.head !== true
    ) {
      socket = candidate;
      chunked = res.chunkedEncoding;
    }
    return socket;
  };
  /** Whether messages can go: false once closed or gone, or cut off now for falling behind. */
  const writable = (): boolean => {
    if (closed) return false;
    const to = socket ?? direct();
    if (to ? to.destroyed || !to.writable : res.destroyed) return false;
    // Checked before a write: one message, or one batch, larger than the bound (an event's data
    // may reach the body limit) does not cut off a consumer that reads.
    if ((to ?? res).writableLength > bufferBytes) {
      res.destroy();
      return false;
    }
    return true;
  };
  const put = (bytes: Framed) => {
    if (socket) {
      if (chunked) bytes.chunk ??= asChunk(bytes.event);
      socket.write(chunked ? (bytes.chunk as Buffer) : bytes.event);
    } else {
      if (!res.headersSent) res.writeHead(200, HEADERS);
      res.write(bytes.event);
    }
  };
  /** Writes messages in one go: several leave in one call to the kernel. */
  const write = (all: readonly Framed[]): boolean => {
    if (!writable()) return false;
    const batch = all.length > 1 ? socket : undefined;
    batch?.cork();
    for (const bytes of all) put(bytes);
    batch?.uncork();
    last = Date.now();
    return true;
  };
  return {
    send: (message: StreamMessage) => write([frame(message)]),
    sendAll: (messages) => write(messages.map(frame)),
    heartbeat: (id) => void write([{ event: Buffer.from(`: heartbeat\nid: ${id}\n\n`) }]),
    lastWrite: () => last,
    drained: () =>
      new Promise<void>((resolve) => {
        // Whatever a write left waiting, the response's or its socket's, ends with the socket's drain.
        const waiting = socket ?? res;
        if (!waiting.writableNeedDrain || waiting.destroyed) return resolve();
        const done = () => {
          waiting.off('drain', done);
          waiting.off('close', done);
          resolve();
        };
        waiting.on('drain', done);
        waiting.on('close', done);
      }),
    close: () => {
      closed = true;
      if (!res.headersSent) res.writeHead(200, HEADERS);
      res.end();
    },
  };
}
