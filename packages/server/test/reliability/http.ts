import { Pool } from 'undici';
import type { Answer } from './spec.js';

export interface RawRequest {
  method: string;
  /** Sent exactly as given: no normalization, no encoding. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface Sender {
  send(request: RawRequest): Promise<Answer>;
  close(): Promise<void>;
}

/**
 * A live stream's first message (up to its blank line), then the connection is let go: a
 * stream does not end by itself, and its first message is what a matrix of requests can check.
 */
async function firstMessage(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  let text = '';
  for await (const chunk of body) {
    text += chunk.toString();
    if (text.includes('\n\n')) break;
  }
  body.destroy();
  const end = text.indexOf('\n\n');
  return end === -1 ? text : text.slice(0, end + 2);
}

/**
 * Sends raw requests over a few kept-alive HTTPS connections, each bounded in time: a
 * server that hangs fails the test instead of stalling it. The bounds (connecting included,
 * whose own default is 10 s) are for a hung server only: a loaded machine may take seconds.
 */
export function createSender(
  server: { baseUrl: string; ca: string },
  options: { connections?: number; timeoutMs?: number } = {},
): Sender {
  const timeout = options.timeoutMs ?? 60_000;
  const pool = new Pool(server.baseUrl, {
    connect: { ca: server.ca, timeout },
    connections: options.connections ?? 4,
    headersTimeout: timeout,
    bodyTimeout: timeout,
  });
  return {
    async send({ method, path, headers = {}, body }) {
      const response = await pool.request({
        method: method.toUpperCase() as 'GET',
        path,
        headers,
        body: body ?? null,
      });
      const streamed = String(response.headers['content-type'] ?? '').startsWith('text/event-stream');
      const text = streamed ? await firstMessage(response.body) : await response.body.text();
      return { status: response.statusCode, headers: response.headers, text };
    },
    close: () => pool.close(),
  };
}
