import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/db.js';
import { sqlite } from '../../../src/store/dialect.js';
import { prepared } from '../../../src/store/prepared.js';
import { sqliteExecutor } from '../../../src/store/sql.js';

// A prepared query is built once with stand-ins, then run with each call's values.

const db = openDatabase(':memory:');
const x = sqliteExecutor(db);
const { q } = sqlite;
const TIME = '2026-11-27T00:00:00.000Z';
for (const [id, name] of [
  ['o1', 'alpha'],
  ['o2', 'beta'],
  ['o3', 'gamma'],
] as const) {
  await x.run(
    q.insertInto('organizations').values({ id, name, creation_time: TIME, contact_email_address: 'a@b.c' }),
  );
}

describe('prepared', () => {
  it('runs the query built once with the values of each call, constants kept', async () => {
    let builds = 0;
    const byName = prepared(2, (name: string, limit: number) => {
      builds += 1;
      return q
        .selectFrom('organizations')
        .select(['id', 'name'])
        .where('name', '>=', name)
        .where('disabled', '=', 0)
        .orderBy('name')
        .limit(limit);
    });
    expect(await x.all(byName('beta', 1))).toEqual([{ id: 'o2', name: 'beta' }]);
    expect(await x.all(byName('alpha', 2))).toEqual([
      { id: 'o1', name: 'alpha' },
      { id: 'o2', name: 'beta' },
    ]);
    expect(builds).toBe(1);
  });

  it("passes a list through the dialect's fragment, encoded at each call", async () => {
    const named = prepared(1, (ids: readonly string[]) =>
      q
        .selectFrom('organizations')
        .select('name')
        .where((eb) => sqlite.oneOf(eb.ref('id'), ids))
        .orderBy('name'),
    );
    expect(await x.all(named(['o3', 'o1']))).toEqual([{ name: 'alpha' }, { name: 'gamma' }]);
    expect(await x.all(named([]))).toEqual([]);
  });

  it('refuses an argument that decides nothing in the query', () => {
    const unused = prepared(2, (id: string, _other: string) =>
      q.selectFrom('organizations').select('id').where('id', '=', id),
    );
    expect(() => unused('o1', 'o2')).toThrow('argument 1 of a prepared query is no parameter');
  });
});
