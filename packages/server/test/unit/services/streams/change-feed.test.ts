import { describe, expect, it } from 'vitest';
import { type Change, createPollingChangeFeed } from '../../../../src/services/streams/change-feed.js';
import { openDatabase } from '../../../../src/store/db.js';
import { createStore } from '../../../../src/store/index.js';
import { waitFor } from '../../../helpers/wait.js';

// A commit of the server's own process reaches the feed's listeners at once when it says so,
// rather than at the feed's next check: here the checks are an hour apart.

function world() {
  const db = openDatabase(':memory:');
  db.exec(`INSERT INTO organizations (id, name, creation_time) VALUES ('o', 'o', 't');
           INSERT INTO projects (id, org_id, name) VALUES ('p', 'o', 'p')`);
  const insertEvent = db.prepare<[string]>(
    `INSERT INTO events (id, org_id, project_id, creation_time, event_time, connector, name, data)
     VALUES (?, 'o', 'p', 't', 't', 'custom', 'push', '{}')`,
  );
  const feed = createPollingChangeFeed(createStore(db), { intervalMs: 3_600_000 });
  const batches: (readonly Change[])[] = [];
  const unsubscribe = feed.subscribe(
    (changes) => batches.push(changes),
    (error) => {
      throw error;
    },
  );
  const eventsSeen = () => batches.map((changes) => changes.map((change) => change.id));
  return { feed, insertEvent, eventsSeen, unsubscribe };
}

describe('change feed', () => {
  it('reads at once what this process says it committed, in one batch per turn of the event loop', async () => {
    const { feed, insertEvent, eventsSeen, unsubscribe } = world();
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
});
