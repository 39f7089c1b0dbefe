import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * Reads `messages` until one makes `done` true (included), at most `timeoutMs`; returns what it
 * read. Past the bound it throws with the count read, and the stream is left to its caller.
 */
export async function collect<T>(
  messages: AsyncIterator<T>,
  done: (message: T) => boolean,
  timeoutMs = 20_000,
): Promise<T[]> {
  const read: T[] = [];
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`stream condition not met within ${timeoutMs} ms (${read.length} read)`)),
      timeoutMs,
    );
  });
  try {
    for (;;) {
      const next = await Promise.race([messages.next(), expired]);
      if (next.done) throw new Error(`the stream ended after ${read.length} messages`);
      read.push(next.value);
      if (done(next.value)) return read;
    }
  } finally {
    clearTimeout(timer);
  }
}

export interface Proxy {
  /** The proxy's base URL, to give a client instead of the server's. */
  baseUrl: string;
  /** Connections it forwarded so far. */
  readonly connections: number;
  /** Cuts every connection open through it, as a network failure would. */
  cutAll(): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy on 127.0.0.1 to the server at `target` (TLS passes through it untouched), whose
 * connections a test can cut: a forced disconnect, seen by both ends.
 */
export async function forwardingProxy(target: string): Promise<Proxy> {
  const { hostname, port, protocol } = new URL(target);
  const open = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((client) => {
    connections += 1;
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `${protocol}//127.0.0.1:${(server.address() as AddressInfo).port}`,
    get connections() {
      return connections;
    },
    cutAll() {
      for (const socket of open) socket.destroy();
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
