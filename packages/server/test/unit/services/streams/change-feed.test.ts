import { describe, expect, it } from 'vitest';
import { type Change, createPollingChangeFeed } from '../../../../src/services/streams/change-feed.js';
import { openDatabase } from '../../../../src/store/db.js';
import { createStore } from '../../../../src/store/index.js';
import { waitFor } from '../../../helpers/wait.js';

// A commit of the server's own process reaches the feed's listeners at once when it says so,
// rather than at the feed's next check: here the checks are an hour apart.

/** A database with a project, and a way to commit an event to it. */
function database() {
  const db = openDatabase(':memory:');
  db.exec(`INSERT INTO organizations (id, name, creation_time) VALUES ('o', 'o', 't');
           INSERT INTO projects (id, org_id, name) VALUES ('p', 'o', 'p')`);
  const insertEvent = db.prepare<[string]>(
    `INSERT INTO events (id, org_id, project_id, creation_time, event_time, connector, name, data)
     VALUES (?, 'o', 'p', 't', 't', 'custom', 'push', '{}')`,
  );
  return { store: createStore(db), insertEvent };
}

async function world() {
  const { store, insertEvent } = database();
  const feed = createPollingChangeFeed(store, { intervalMs: 3_600_000 });
  const batches: (readonly Change[])[] = [];
  const unsubscribe = feed.subscribe(
    async (changes) => {
      batches.push(changes);
    },
    (error) => {
      throw error;
    },
    await feed.latest(),
  );
  const eventsSeen = () => batches.map((changes) => changes.map((change) => change.id));
  return { feed, insertEvent, eventsSeen, unsubscribe };
}

describe('change feed', () => {
  it('reads at once what this process says it committed, in one batch per turn of the event loop', async () => {
    const { feed, insertEvent, eventsSeen, unsubscribe } = await world();
    insertEvent.run('e1');
    feed.committed();
    insertEvent.run('e2');
    feed.committed();
    const seen = await waitFor(
      async () => eventsSeen(),
      (batches) => batches.length > 0,
      10_000,
    );
    expect(seen).toEqual([['e1', 'e2']]);
    insertEvent.run('e3');
    feed.committed();
    expect(
      await waitFor(
        async () => eventsSeen(),
        (batches) => batches.length > 1,
        10_000,
      ),
    ).toEqual([['e1', 'e2'], ['e3']]);
    unsubscribe();
  });

  it('starts after the change its subscriber knew of, and hands its listener one batch at a time', async () => {
    const { store, insertEvent } = database();
    const feed = createPollingChangeFeed(store, { intervalMs: 3_600_000, batch: 1 });
    const known = await feed.latest();
    // Committed after the subscriber read the log, before it subscribed: delivered all the same.
    insertEvent.run('e1');
    insertEvent.run('e2');
    const seen: string[] = [];
    let busy = false;
    let overlapped = false;
    const unsubscribe = feed.subscribe(
      async (changes) => {
        overlapped ||= busy;
        busy = true;
        await new Promise((resolve) => setTimeout(resolve, 10));
        seen.push(...changes.map((change) => change.id));
        busy = false;
      },
      (error) => {
        throw error;
      },
      known,
    );
    feed.committed();
    // Asked for while the listener is busy with the first batch.
    setImmediate(() => {
      insertEvent.run('e3');
      feed.committed();
    });
    expect(
      await waitFor(
        async () => [...seen],
        (ids) => ids.length >= 3,
        10_000,
      ),
    ).toEqual(['e1', 'e2', 'e3']);
    expect(overlapped).toBe(false);
    unsubscribe();
  });
});
