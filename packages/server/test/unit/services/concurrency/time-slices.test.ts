import { stat } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextTurn } from '../../../../src/services/concurrency/time-slices.js';

// A long job resumed from a request's handler must let the requests that arrived meanwhile be
// read before its next slice: a handler runs in the loop's poll for input, and a single
// setImmediate resumes the job right after it, before the loop polls again.

let server: ReturnType<typeof createServer>;
let client: Socket;
const received: string[] = [];
beforeAll(async () => {
  server = createServer((socket) => socket.on('data', (data) => received.push(String(data))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  client = connect(port, '127.0.0.1');
  await new Promise((resolve) => client.once('connect', resolve));
});
afterAll(async () => {
  client.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe('nextTurn', () => {
  it('reads the input that arrived during the slice before going on, from an I/O callback', async () => {
    // A file system callback runs where a request's handler does: in the poll for input.
    const seen = await new Promise<string[]>((resolve) =>
      stat('.', async () => {
        client.write('meanwhile');
        // Written at once on the loopback: it waits in the server's socket as the slice ends.
        await nextTurn();
        resolve([...received]);
      }),
    );
    expect(seen).toEqual(['meanwhile']);
  });
});
