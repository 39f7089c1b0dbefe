import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/index.js';

// The stores answer with promises, so a transaction spans turns of the event loop. Two
// connections to one file on one thread (the API's and the scheduler's) must neither write into
// each other's transaction nor block the thread on each other's write lock.

const dir = mkdtempSync(join(tmpdir(), 'pipewright-gate-'));
const file = join(dir, 'pipewright.db');
const api = await openStore(file);
const work = await openStore(file, 'relaxed');
afterAll(async () => {
  await api.close();
  await work.close();
  rmSync(dir, { recursive: true, force: true });
});

const TIME = '2026-11-27T00:00:00.000Z';
let count = 0;
const org = () => {
  count += 1;
  return { id: `org${count}`, name: `org ${count}`, creation_time: TIME, contact_email_address: 'a@b.c' };
};

/** A promise and the function that settles it. */
function deferred() {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

describe('the connection gate', () => {
  it('holds every call of the file, on either connection, until the transaction under way ends', async () => {
    const inside = org();
    const outside = org();
    const held = deferred();
    const entered = deferred();
    const transaction = api.transaction(async (tx) => {
      await tx.organizations.insert(inside);
      entered.resolve();
      await held.promise;
    });
    await entered.promise;
    // Through the other connection: without the gate, its write would wait for the write lock
    // on the thread, which the transaction could never release.
    const write = work.organizations.insert(outside);
    const read = api.organizations.get(inside.id);
    let settled = false;
    void Promise.all([write, read]).then(() => {
      settled = true;
    });
    // Many turns of the event loop: nothing is let through while the transaction is open.
    for (let turn = 0; turn < 20; turn++) await new Promise((next) => setImmediate(next));
    expect(settled).toBe(false);
    held.resolve();
    await transaction;
    await write;
    expect(await read).toMatchObject({ id: inside.id });
    expect(await work.organizations.get(outside.id)).toMatchObject({ id: outside.id });
  });

  it('undoes a transaction that throws, and a savepoint alone', async () => {
    const undone = org();
    await expect(
      api.transaction(async (tx) => {
        await tx.organizations.insert(undone);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await api.organizations.get(undone.id)).toBeUndefined();

    const kept = org();
    const partly = org();
    await api.transaction(async (tx) => {
      await tx.organizations.insert(kept);
      await tx
        .savepoint(async () => {
          await tx.organizations.insert(partly);
          throw new Error('this part only');
        })
        .catch(() => undefined);
    });
    expect(await api.organizations.get(kept.id)).toMatchObject({ id: kept.id });
    expect(await api.organizations.get(partly.id)).toBeUndefined();
  });

  it('refuses, in tests, a call that would wait for the transaction it is made from', async () => {
    expect(process.env.PIPEWRIGHT_STORE_CHECKS).toBe('1');
    const other = org();
    await expect(
      api.transaction(async () => {
        await work.organizations.insert(other);
      }),
    ).rejects.toThrow('a store call outside the transaction was made from inside it');
    expect(await api.organizations.get(other.id)).toBeUndefined();
  });
});
