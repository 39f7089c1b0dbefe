import type { AddressInfo } from 'node:net';
import { connect, createServer, type Socket } from 'node:net';

// A bound for a broken run only: a loaded machine may take seconds.
const BOUND_MS = 120_000;

/** A TCP proxy in front of a server, whose connections a test cuts as a network would. */
export interface CuttableProxy {
  /** The server's URL through the proxy. */
  url: string;
  /** Closes every connection through the proxy, and closes new ones at once until `restore`. */
  cut(): void;
  /** Lets connections through again. */
  restore(): void;
  /** Resolves once `count` connections were closed at once since the cut; rejects after a bound. */
  refused(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a proxy on an ephemeral port of 127.0.0.1 that passes bytes both ways to `target` (a
 * URL): TLS goes through untouched, and the server's certificate still names 127.0.0.1.
 */
export async function startProxy(target: string): Promise<CuttableProxy> {
  const { hostname, port } = new URL(target);
  const open = new Set<Socket>();
  let down = false;
  let refusals = 0;
  const changed = new Set<() => void>();
  const track = (socket: Socket) => {
    open.add(socket);
    // A cut resets connections: their errors are what the test wants, not failures of its own.
    socket.on('error', () => socket.destroy());
    socket.on('close', () => open.delete(socket));
  };
  const server = createServer((client) => {
    track(client);
    if (down) {
      refusals += 1;
      client.destroy();
      for (const listener of changed) listener();
      return;
    }
    const upstream = connect(Number(port), hostname);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString().replace(/\/$/, ''),
    cut() {
      down = true;
      refusals = 0;
      for (const socket of open) socket.destroy();
    },
    restore() {
      down = false;
    },
    refused: (count) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (refusals < count) return;
          clearTimeout(timer);
          changed.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          changed.delete(check);
          reject(new Error(`fewer than ${count} connections came to the cut proxy in time`));
        }, BOUND_MS);
        changed.add(check);
        check();
      }),
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
