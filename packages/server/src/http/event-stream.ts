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

/** Messages as written, kept while the message lives: every stream of a change sends the same one. */
const framed = new WeakMap<StreamMessage, Buffer>();
const frame = (message: StreamMessage): Buffer => {
  let bytes = framed.get(message);
  if (!bytes) {
    bytes = Buffer.from(`event: ${message.event}\nid: ${message.id}\ndata: ${message.data}\n\n`);
    framed.set(message, bytes);
  }
  return bytes;
};

/**
 * Writes a stream's messages to `res` as Server-Sent Events, the headers with the first. Writes
 * never wait: a consumer that stops reading has its messages kept in the server's buffers until
 * more than `bufferBytes` wait there (the response's and its socket's) when another comes, and is
 * then cut off, its connection destroyed, so that it holds no more memory and slows no one else.
 * A heartbeat carries the `id` too: an `id` field alone sets the consumer's Last-Event-ID without
 * making an event.
 */
export function eventStream(res: Response, bufferBytes: number): EventStream {
  let last = Date.now();
  const write = (text: string | Buffer): boolean => {
    if (res.destroyed || res.writableEnded) return false;
    // Checked before the write: one message larger than the bound (an event's data may reach the
    // body limit) does not cut off a consumer that reads.
    if (res.writableLength > bufferBytes) {
      res.destroy();
      return false;
    }
    if (!res.headersSent) res.writeHead(200, HEADERS);
    res.write(text);
    last = Date.now();
    return true;
  };
  return {
    send: (message: StreamMessage) => write(frame(message)),
    heartbeat: (id) => void write(`: heartbeat\nid: ${id}\n\n`),
    lastWrite: () => last,
    drained: () =>
      new Promise<void>((resolve) => {
        if (!res.writableNeedDrain || res.destroyed) return resolve();
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      }),
    close: () => {
      if (!res.headersSent) res.writeHead(200, HEADERS);
      res.end();
    },
  };
}
