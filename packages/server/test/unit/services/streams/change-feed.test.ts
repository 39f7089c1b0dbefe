import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type Change, createPollingChangeFeed } from '../../../../src/services/streams/change-feed.js';
import { openDatabase } from '../../../../src/store/db.js';
import { eventDatabase, INSERT_EVENT } from '../../../helpers/event-database.js';
import { waitFor } from '../../../helpers/wait.js';

// A commit reaches the feed's listeners as soon as the store tells of it, whoever commits: this
// connection, another of this process, or another process. Here the feed's own checks are an hour
// apart, so only the store's word can bring a change within the tests' bounds.

async function world() {
  const { file, store, insertEvent } = eventDatabase();
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
  return { file, insertEvent, eventsSeen, unsubscribe };
}

const batchesOf = (eventsSeen: () => string[][], count: number) =>
  waitFor(
    async () => eventsSeen(),
    (batches) => batches.length >= count,
    10_000,
  );

describe('change feed', () => {
  it('reads at once what this process commits, in one batch for the commits of one turn of the event loop', async () => {
    const { insertEvent, eventsSeen, unsubscribe } = await world();
    insertEvent('e1');
    insertEvent('e2');
    expect(await batchesOf(eventsSeen, 1)).toEqual([['e1', 'e2']]);
    insertEvent('e3');
    expect(await batchesOf(eventsSeen, 2)).toEqual([['e1', 'e2'], ['e3']]);
    unsubscribe();
  });

  it('reads at once what another connection or another process commits', async () => {
    const { file, eventsSeen, unsubscribe } = await world();
    const other = openDatabase(file);
    other.prepare(INSERT_EVENT).run('e1');
    expect(await batchesOf(eventsSeen, 1)).toEqual([['e1']]);
    other.close();
    // A process of its own, as an admin command is.
    const script = `const db = new (require('better-sqlite3'))(process.argv[1]);
      db.pragma('busy_timeout = 5000');
      db.prepare(${JSON.stringify(INSERT_EVENT)}).run('e2');`;
    await promisify(execFile)(process.execPath, ['-e', script, file]);
    expect(await batchesOf(eventsSeen, 2)).toEqual([['e1'], ['e2']]);
    unsubscribe();
  });

  it('looks again, soon, for a commit told before it shows', async () => {
    // Another process's commit can be told as its last frame is written, before it is published.
    // Here the store tells of a commit that is made only once the feed has looked and found nothing.
    const { file, store } = eventDatabase();
    let tell = () => {};
    let looks = 0;
    const early = {
      ...store,
      onCommit: (listener: () => void) => {
        tell = listener;
        return () => {};
      },
      changeStamp: () => {
        looks += 1;
        return store.changeStamp();
      },
    };
    const feed = createPollingChangeFeed(early, { intervalMs: 3_600_000 });
    const seen: string[] = [];
    const unsubscribe = feed.subscribe(
      async (changes) => {
        seen.push(...changes.map((change) => change.id));
      },
      (error) => {
        throw error;
      },
      await feed.latest(),
    );
    // The first look reads the log whatever the stamp; the second, told, finds nothing.
    for (const count of [1, 2]) {
      tell();
      await waitFor(
        async () => looks,
        (made) => made >= count,
        10_000,
      );
    }
    const other = openDatabase(file);
    other.prepare(INSERT_EVENT).run('e1');
    other.close();
    expect(
      await waitFor(
        async () => [...seen],
        (ids) => ids.length >= 1,
        10_000,
      ),
    ).toEqual(['e1']);
    unsubscribe();
  });

  it('starts after the change its subscriber knew of, and hands its listener one batch at a time', async () => {
    const { store, insertEvent } = eventDatabase();
    const feed = createPollingChangeFeed(store, { intervalMs: 3_600_000, batch: 1 });
    const known = await feed.latest();
    // Committed after the subscriber read the log, before it subscribed: delivered all the same.
    insertEvent('e1');
    insertEvent('e2');
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
    // Committed while the listener is busy with the first batch; it also tells the feed to look.
    setImmediate(() => insertEvent('e3'));
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
