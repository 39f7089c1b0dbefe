// A worker thread of the `stall` benchmark: the probe, `GET /v0/org` of another organization every
// 5 ms, timed on an event loop of its own. On the benchmark's loop it would also time the
// benchmark's own work (serializing 10,000 specs to send them), not only the server's delay.
import { parentPort, workerData } from 'node:worker_threads';
import { createClient } from '@pipewright/client';

export interface ProbeSetup {
  baseUrl: string;
  apiKey: string;
}

/** The benchmark sends `stop`; the probe answers with its samples, in milliseconds. */
export type ToProbe = 'stop';
export type FromProbe =
  | { type: 'started' }
  | { type: 'samples'; samples: number[] }
  | { type: 'failed'; message: string };

const port = parentPort as NonNullable<typeof parentPort>;
const { baseUrl, apiKey } = workerData as ProbeSetup;
const client = createClient({ baseUrl, apiKey });
const samples: number[] = [];
let running = true;
port.on('message', (_message: ToProbe) => {
  running = false;
});

const post = (message: FromProbe) => port.postMessage(message);
try {
  // Not timed: the first request of a thread compiles the client's code and connects (40-70 ms
  // here, which is no delay of the server's).
  await client.GET('/org');
  post({ type: 'started' });
  while (running) {
    const started = performance.now();
    const { response } = await client.GET('/org');
    if (!response.ok) throw new Error(`probe answered ${response.status}`);
    samples.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  post({ type: 'samples', samples });
} catch (error) {
  post({ type: 'failed', message: String(error) });
}
