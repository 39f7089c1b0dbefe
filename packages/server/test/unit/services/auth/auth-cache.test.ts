import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createKeyOwnerCache } from '../../../../src/services/auth/auth-cache.js';
import { createChangeStamp } from '../../../../src/store/change-stamp.js';
import { openDatabase } from '../../../../src/store/db.js';

/** A cache over a stamp and a clock the test moves, and a loader that counts its loads. */
function cacheOf() {
  const state = { stamp: 's1', now: 0, loads: 0 };
  const cache = createKeyOwnerCache<string>(
    () => state.stamp,
    () => state.now,
  );
  const resolve = (id: string, owner: string | null = `owner of ${id}`) =>
    cache.resolve(id, async () => {
      state.loads += 1;
      return owner ?? undefined;
    });
  return { state, resolve };
}

describe('the key owner cache', () => {
  it('loads a key once while the stamp stays, and again once it changed', async () => {
    const { state, resolve } = cacheOf();
    expect([await resolve('a'), await resolve('a'), await resolve('a')]).toEqual(Array(3).fill('owner of a'));
    expect(state.loads).toBe(1);
    state.stamp = 's2';
    expect(await resolve('a', 'new owner')).toBe('new owner');
    expect(await resolve('a')).toBe('new owner');
    expect(state.loads).toBe(2);
  });

  it('forgets every key when the stamp changes, not only the one asked for', async () => {
    const { state, resolve } = cacheOf();
    await resolve('a');
    await resolve('b');
    state.stamp = 's2';
    await resolve('a');
    await resolve('b');
    expect(state.loads).toBe(4);
  });

  it('keeps no unknown key: each lookup of one loads', async () => {
    const { state, resolve } = cacheOf();
    expect(await resolve('x', null)).toBeUndefined();
    expect(await resolve('x', null)).toBeUndefined();
    expect(state.loads).toBe(2);
  });

  it('loads a key again after 10 s, even in a database nothing writes to', async () => {
    const { state, resolve } = cacheOf();
    await resolve('a');
    state.now = 9_999;
    await resolve('a');
    expect(state.loads).toBe(1);
    state.now = 10_000;
    await resolve('a');
    expect(state.loads).toBe(2);
  });

  it('keeps at most 1,000 keys, dropping the oldest first', async () => {
    const { state, resolve } = cacheOf();
    for (let i = 0; i <= 1_000; i += 1) await resolve(`k${i}`);
    expect(state.loads).toBe(1_001);
    await resolve('k1000');
    await resolve('k1');
    expect(state.loads).toBe(1_001);
    await resolve('k0');
    expect(state.loads).toBe(1_002);
  });
});

describe('the change stamp', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('moves with every commit, by its own connection or another, and not with reads', () => {
    dir = mkdtempSync(join(tmpdir(), 'pipewright-stamp-'));
    const file = join(dir, 'stamp.db');
    const own = openDatabase(file);
    const other = new Database(file);
    try {
      own.exec('CREATE TABLE t (x INTEGER)');
      const stamp = createChangeStamp(own);
      const seen = [stamp()];
      own.prepare('SELECT count(*) FROM t').get();
      other.prepare('SELECT count(*) FROM t').get();
      expect(stamp()).toBe(seen[0]);
      own.prepare('INSERT INTO t VALUES (1)').run();
      seen.push(stamp());
      other.prepare('INSERT INTO t VALUES (2)').run();
      seen.push(stamp());
      other.prepare('UPDATE t SET x = 3 WHERE x = 2').run();
      seen.push(stamp());
      own.prepare('DELETE FROM t WHERE x = 1').run();
      seen.push(stamp());
      expect(new Set(seen).size).toBe(5);
    } finally {
      other.close();
      own.close();
    }
  });
});
