// A worker thread of the `streams` benchmark: the clients of a share of the streams, each a raw
// connection that looks for a marker in the bytes it reads, with the time each message arrives.
// The protocol with the benchmark is in streams-readers.ts.
import { connect, type Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { type FromReader, nowMs, type ReaderSetup, type ToReader } from './streams-readers.js';

const { port, host, requests, marker, timed } = workerData as ReaderSetup;
const port_ = parentPort as NonNullable<typeof parentPort>;
const wanted = Buffer.from(marker);
const start = Buffer.from('event: start\n');
const post = (message: FromReader) => port_.postMessage(message);

// Arrival times not reported yet, how many the benchmark waits for (0: none), and the totals.
let arrivals: number[] = [];
let expected = 0;
let received = 0;
let lastArrival = 0;
let started = 0;

const reportIfComplete = () => {
  if (expected === 0 || arrivals.length < expected) return;
  post({ type: 'arrivals', times: arrivals });
  arrivals = [];
  expected = 0;
};

// One buffer for every read of this thread (`onread`): no allocation, no stream machinery per read.
const buffer = Buffer.alloc(64 * 1024);
const sockets: Socket[] = requests.map((request) => {
  let open = false;
  const socket = connect({
    port,
    host,
    onread: {
      buffer,
      callback: (size: number, bytes: Uint8Array) => {
        const at = nowMs();
        const chunk = (bytes as Buffer).subarray(0, size);
        if (!open && chunk.includes(start)) {
          open = true;
          started += 1;
          if (started === requests.length) post({ type: 'ready' });
        }
        // A message whose marker a read splits is not counted: the benchmark reads one message at
        // a time per stream, far smaller than a read.
        for (
          let found = chunk.indexOf(wanted);
          found >= 0;
          found = chunk.indexOf(wanted, found + wanted.length)
        ) {
          if (timed) arrivals.push(at);
          received += 1;
          lastArrival = at;
        }
        reportIfComplete();
        return true;
      },
    },
  });
  socket.setNoDelay(true);
  socket.on('error', (error) => post({ type: 'failed', message: error.message }));
  socket.write(request);
  return socket;
});

port_.on('message', (message: ToReader) => {
  if (message.type === 'expect') {
    // What came before the benchmark armed the readers is no answer to its next commit.
    arrivals = [];
    expected = message.count;
    reportIfComplete();
  } else if (message.type === 'totals') {
    post({ type: 'totals', received, lastArrival });
  } else {
    for (const socket of sockets) socket.destroy();
    port_.close();
  }
});
