import { describe, expect, it } from 'vitest';
import { createPollingChangeFeed } from '../../../src/services/streams/change-feed.js';
import type { StreamMessage, StreamSink } from '../../../src/services/streams/stream-types.js';
import { STREAMS_PER_TURN } from '../../../src/services/streams/turns.js';
import { createStreamService } from '../../../src/services/streams.service.js';
import { eventDatabase } from '../../helpers/event-database.js';
import { waitFor } from '../../helpers/wait.js';

// A change fanned out to thousands of streams of one project must not hold the server's thread for
// the whole fan-out: everyone else's requests wait on that thread. The service lets other work run
// after every STREAMS_PER_TURN streams; here "other work" is a callback queued on the event loop
// when the first stream gets the change.

function world() {
  const { store, insertEvent, close } = eventDatabase();
  // The feed's own checks an hour apart: the store's word of each commit brings the changes.
  const service = createStreamService(store, createPollingChangeFeed(store, { intervalMs: 3_600_000 }));
  return { service, insertEvent, close };
}

/** A sink that keeps the ids of the events it was sent, and calls `onEvent` with each. */
function recordingSink(onEvent: (id: string) => void) {
  const events: string[] = [];
  const take = (message: StreamMessage) => {
    if (message.event !== 'event') return;
    const id = (JSON.parse(message.data) as { id: string }).id;
    events.push(id);
    onEvent(id);
  };
  const sink: StreamSink = {
    send: (message) => {
      take(message);
      return true;
    },
    sendAll: (messages) => {
      for (const message of messages) take(message);
      return true;
    },
    drained: async () => {},
    close: () => {},
  };
  return { sink, events };
}

describe('fan-out of a change to many streams', () => {
  it('lets queued work run after every STREAMS_PER_TURN streams, and reaches every stream', async () => {
    const { service, insertEvent, close } = world();
    const count = STREAMS_PER_TURN * 3 + 7;
    const request = {
      principal: { orgId: 'o', keyId: 'k', role: 'admin' as const },
      project: { id: 'p', org_id: 'o', name: 'p' },
      stillAuthorized: async () => true,
    };
    let received = 0;
    let receivedBeforeOtherWork: number | undefined;
    const onEvent = (id: string) => {
      if (id !== 'second') return;
      received += 1;
      if (received === 1) setImmediate(() => (receivedBeforeOtherWork ??= received));
    };
    const sinks = Array.from({ length: count }, () => recordingSink(onEvent));
    const streams = [];
    for (const { sink } of sinks) streams.push(await service.projectChanges(request, {}, sink));

    // A first change, so that every stream has caught up and takes the next from the fan-out.
    insertEvent('first');
    await waitFor(
      async () => sinks.filter(({ events }) => events.includes('first')).length,
      (reached) => reached === count,
      10_000,
    );
    insertEvent('second');
    await waitFor(
      async () => received,
      (reached) => reached === count,
      10_000,
    );

    expect(receivedBeforeOtherWork).toBeGreaterThanOrEqual(1);
    expect(receivedBeforeOtherWork).toBeLessThanOrEqual(STREAMS_PER_TURN);
    for (const { events } of sinks) expect(events).toEqual(['first', 'second']);
    for (const stream of streams) stream.close();
    close();
  });
});
