// The floor of `streams`: what writing one message to every stream costs this machine, whoever
// the server. A bare `node:net` server: each connection gets an HTTP head and a `start` event as
// soon as its request arrives, and is a stream from then on; a byte on the connection that sends
// `TRIGGER` first (answered `ready`) writes one message, framed beforehand as a chunk, to every stream at once. No
// HTTP parsing, database, JSON or filters: the commit is the byte, the fan-out a loop of writes.
// The message's data is the first argument (the benchmark gives a pipeline as ours sends it).
import { createServer, type Socket } from 'node:net';

const [data = '{}'] = process.argv.slice(2);
const event = Buffer.from(`event: pipeline\nid: 1\ndata: ${data}\n\n`);
const chunk = Buffer.concat([Buffer.from(`${event.length.toString(16)}\r\n`), event, Buffer.from('\r\n')]);
const HEAD =
  'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n' +
  '17\r\nevent: start\ndata: {}\n\n\r\n';
const streams = new Set<Socket>();

const server = createServer((socket) => {
  socket.setNoDelay(true);
  socket.on('error', () => socket.destroy());
  socket.on('close', () => streams.delete(socket));
  socket.once('data', (request) => {
    if (request.toString('latin1').startsWith('TRIGGER')) {
      socket.on('data', () => {
        for (const stream of streams) stream.write(chunk);
      });
      socket.write('ready\n');
      return;
    }
    socket.write(HEAD);
    streams.add(socket);
  });
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as import('node:net').AddressInfo;
  process.stderr.write(`${JSON.stringify({ message: 'listening', url: `http://127.0.0.1:${port}/v0` })}\n`);
});
