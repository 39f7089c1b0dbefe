import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';
import { type Cursor, encodeKey, type PageRequest } from '../../../src/domain/cursor.js';
import { DomainError } from '../../../src/domain/errors.js';
import { sqlite } from '../../../src/store/dialect.js';
import { paginate } from '../../../src/store/paginate.js';
import { type Executor, sqliteExecutor } from '../../../src/store/sql.js';

// Ten rows; `name` has ties (three "b", two "d") so that the id tie-breaker is exercised.
const ROWS = [
  ['01', 'c'],
  ['02', 'b'],
  ['03', 'a'],
  ['04', 'b'],
  ['05', 'e'],
  ['06', 'd'],
  ['07', 'b'],
  ['08', 'd'],
  ['09', 'f'],
  ['10', 'g'],
] as const;
const BY_NAME = ['03', '02', '04', '07', '01', '06', '08', '05', '09', '10'];
const BY_ID = ROWS.map(([id]) => id);

let db: Database.Database;
let x: Executor;
beforeEach(() => {
  db = new Database(':memory:');
  db.exec('CREATE TABLE items (id TEXT PRIMARY KEY, name TEXT NOT NULL, grp TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO items VALUES (?, ?, ?)');
  for (const [id, name] of ROWS) insert.run(id, name, 'g1');
  insert.run('99', 'zz', 'other-group');
  x = sqliteExecutor(db);
});

const q = sqlite.q.withTables<{ items: { id: string; name: string; grp: string } }>();

function page(request: Partial<PageRequest>) {
  return paginate<{ id: string; name: string }, string>(x, {
    from: q.selectFrom('items').where('grp', '=', 'g1'),
    sorts: { id: 'id', name: 'name' },
    request: { size: 20, sort: 'id', order: 'asc', ...request },
    toElement: (row) => row.id,
  });
}

/** The key of the position of element `id` in the id sort. */
function idKey(id: string): string {
  return encodeKey('id', { value: id, id, inclusive: false });
}

function follow(cursor: Cursor | undefined) {
  if (!cursor) throw new Error('expected a cursor');
  return page(cursor);
}

/** Walks the whole collection through `next` (or `previous`) and collects it. */
async function walk(start: Partial<PageRequest>, direction: 'next' | 'previous') {
  const seen: string[] = [];
  let current = await page(start);
  for (let guard = 0; guard < 50; guard += 1) {
    seen.push(...(direction === 'next' ? current.elements : [...current.elements].reverse()));
    const cursor = current[direction];
    if (!cursor) return direction === 'next' ? seen : seen.reverse();
    current = await follow(cursor);
  }
  throw new Error('walk did not end');
}

describe('paginate', () => {
  it.each([
    { sort: 'id', order: 'asc', expected: BY_ID },
    { sort: 'id', order: 'desc', expected: [...BY_ID].reverse() },
    { sort: 'name', order: 'asc', expected: BY_NAME },
    { sort: 'name', order: 'desc', expected: [...BY_NAME].reverse() },
  ] as const)(
    'walks every element once by $sort $order, forwards and backwards',
    async ({ sort, order, expected }) => {
      for (const size of [1, 3, 4, 10, 11]) {
        expect(await walk({ sort, order, size }, 'next')).toEqual(expected);
        // Backwards from the last page, reached with a forward walk.
        let last = await page({ sort, order, size });
        while (last.next) last = await follow(last.next);
        const backwards: string[] = [...last.elements];
        let current = last;
        while (current.previous) {
          current = await follow(current.previous);
          backwards.unshift(...current.elements);
        }
        expect(backwards).toEqual(expected);
      }
    },
  );

  it.each([
    { name: 'first page', request: {}, elements: BY_ID.slice(0, 3), previous: false, next: true },
    {
      name: 'middle page',
      request: { after: '03' },
      elements: ['04', '05', '06'],
      previous: true,
      next: true,
    },
    {
      name: 'exact last page',
      request: { after: '07' },
      elements: ['08', '09', '10'],
      previous: true,
      next: false,
    },
    {
      name: 'short last page',
      request: { after: '08' },
      elements: ['09', '10'],
      previous: true,
      next: false,
    },
    { name: 'after the end', request: { after: '10' }, elements: [], previous: true, next: false },
    { name: 'before the start', request: { before: '01' }, elements: [], previous: false, next: true },
    {
      name: 'short first page backwards',
      request: { before: '03' },
      elements: ['01', '02'],
      previous: false,
      next: true,
    },
    {
      name: 'backwards page',
      request: { before: '07' },
      elements: ['04', '05', '06'],
      previous: true,
      next: true,
    },
  ])('$name has the right elements and neighbours', async ({ request, elements, previous, next }) => {
    const result = await page({
      size: 3,
      ...(request.after ? { after: idKey(request.after) } : {}),
      ...(request.before ? { before: idKey(request.before) } : {}),
    });
    expect(result.elements).toEqual(elements);
    expect(result.previous !== undefined).toBe(previous);
    expect(result.next !== undefined).toBe(next);
  });

  it('keeps the cursor settings in previous and next', async () => {
    const first = await page({ sort: 'name', order: 'desc', size: 2 });
    expect(first.next).toMatchObject({ size: 2, sort: 'name', order: 'desc' });
    expect(first.next?.after).toMatch(/^[A-Za-z0-9_-]+$/);
    expect((await follow(first.next)).previous).toMatchObject({ size: 2, sort: 'name', order: 'desc' });
  });

  it('size 0 returns no elements but says what lies on each side', async () => {
    const first = await page({ size: 0 });
    expect(first.elements).toEqual([]);
    expect(first.previous).toBeUndefined();
    expect(first.next).toBeDefined();
    const middle = await page({ size: 0, after: (await page({ size: 5 })).next?.after });
    expect(middle.elements).toEqual([]);
    // The two neighbours of an empty page split the collection at the key.
    const widen = (cursor: Cursor | undefined) => follow(cursor && { ...cursor, size: 20 });
    expect((await widen(middle.previous)).elements).toEqual(BY_ID.slice(0, 5));
    expect((await widen(middle.next)).elements).toEqual(BY_ID.slice(5));
  });

  it('an empty page after the end leads back to the last elements', async () => {
    const beyond = await page({ size: 3, after: idKey('10') });
    expect(beyond.elements).toEqual([]);
    expect((await follow(beyond.previous)).elements).toEqual(['08', '09', '10']);
  });

  it('stays correct when rows are inserted between pages', async () => {
    const first = await page({ size: 4 });
    expect(first.elements).toEqual(['01', '02', '03', '04']);
    db.prepare('INSERT INTO items VALUES (?, ?, ?)').run('035', 'x', 'g1'); // before the key
    db.prepare('INSERT INTO items VALUES (?, ?, ?)').run('045', 'x', 'g1'); // after the key
    const second = await follow(first.next);
    expect(second.elements).toEqual(['045', '05', '06', '07']);
    expect((await follow(second.previous)).elements).toEqual(['02', '03', '035', '04']);
  });

  it.each([
    ['garbage', 'not a key!'],
    ['base64 of something else', Buffer.from('{"a":1}').toString('base64url')],
  ])('rejects %s as a key with invalid_query_parameter', async (_name, key) => {
    await expect(page({ after: key })).rejects.toThrow(DomainError);
    await expect(page({ after: key })).rejects.toMatchObject({
      code: 'invalid_query_parameter',
      data: { parameter: 'after' },
    });
  });

  it('rejects a key made for another sort', async () => {
    const key = (await page({ sort: 'name', size: 2 })).next?.after;
    await expect(page({ sort: 'id', after: key })).rejects.toThrow(/made for sort "name"/);
  });
});
