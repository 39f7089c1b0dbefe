import { describe, expect, it } from 'vitest';
import type { EventStream } from '../../../src/http/event-stream.js';
import { createOpenStreams, DEFAULT_STREAM_LIMITS } from '../../../src/http/open-streams.js';
import { STREAMS_PER_TURN } from '../../../src/services/streams/turns.js';
import { waitFor } from '../../helpers/wait.js';

// The heartbeats of many idle streams, and their ends when the server stops, are written a turn
// of the event loop at a time, as the fan-out of a change is: other requests are answered between.

/** `count` idle streams, each calling `served(n)` when sent a heartbeat or ended. */
function idleStreams(count: number, served: (kind: 'heartbeat' | 'end') => void) {
  return Array.from({ length: count }, () => ({
    stream: { position: () => '0', end: () => served('end'), close: () => {} },
    events: {
      heartbeat: () => served('heartbeat'),
      lastWrite: () => 0,
      send: () => true,
      sendAll: () => true,
      drained: async () => {},
      close: () => {},
    } satisfies EventStream,
  }));
}

describe('open streams', () => {
  for (const kind of ['heartbeat', 'end'] as const) {
    it(`lets queued work run after every STREAMS_PER_TURN streams sent a${kind === 'end' ? 'n' : ''} ${kind}`, async () => {
      let stopping = false;
      const streams = createOpenStreams({ ...DEFAULT_STREAM_LIMITS, heartbeatMs: 5 }, () => stopping);
      stopping = kind === 'end';
      const count = STREAMS_PER_TURN * 2 + 3;
      let sent = 0;
      let sentBeforeOtherWork: number | undefined;
      const releases = idleStreams(count, (what) => {
        if (what !== kind) return;
        sent += 1;
        if (sent === 1) setImmediate(() => (sentBeforeOtherWork ??= sent));
      }).map(({ stream, events }) => streams.add(stream, events));
      await waitFor(
        async () => sent,
        (total) => total >= count,
        10_000,
      );
      for (const release of releases) release();
      expect(sentBeforeOtherWork).toBeGreaterThanOrEqual(1);
      expect(sentBeforeOtherWork).toBeLessThanOrEqual(STREAMS_PER_TURN);
    });
  }
});
