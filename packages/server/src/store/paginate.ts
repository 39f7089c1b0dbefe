import { type SelectQueryBuilder, sql } from 'kysely';
import {
  type Cursor,
  decodeKey,
  encodeKey,
  type Page,
  type PageRequest,
  type Position,
} from '../domain/cursor.js';
import type { DB } from './generated/database.js';
import type { Executor } from './sql.js';

/** The rows of a table (or tables), narrowed by the caller, before anything is selected. */
// biome-ignore lint/suspicious/noExplicitAny: a collection is any table of the schema.
export type Collection = SelectQueryBuilder<DB, any, object>;

/**
 * One keyset query over one collection: `from` is the table narrowed to the collection
 * (organization, project, filters), `sorts` maps each sort name to its column. Every sort is
 * ordered by (column, id) so that equal values keep a stable order, and each needs an index
 * ending in those columns.
 */
export interface KeysetQuery<Row, T> {
  from: Collection;
  sorts: Record<string, string>;
  request: PageRequest;
  toElement(row: Row): T;
}

export async function paginate<Row, T>(executor: Executor, query: KeysetQuery<Row, T>): Promise<Page<T>> {
  const { request } = query;
  const column = query.sorts[request.sort];
  if (column === undefined) throw new Error(`no sort ${request.sort}`);
  const forward = request.before === undefined;
  const key = request.after ?? request.before;
  const position = key === undefined ? undefined : decodeKey(key, request.sort, forward ? 'after' : 'before');

  // Scanning "forward" in a desc page, or "backward" in an asc page, walks the index downwards.
  const ascending = (request.order === 'asc') === forward;
  // (column, id) compared as a row value, which SQLite and PostgreSQL both know.
  const beyond = (p: Position, upwards: boolean) => {
    const operator = sql.raw(`${upwards ? '>' : '<'}${p.inclusive ? '=' : ''}`);
    return column === 'id'
      ? sql<boolean>`id ${operator} ${p.id}`
      : sql<boolean>`(${sql.ref(column)}, id) ${operator} (${p.value}, ${p.id})`;
  };

  const direction = ascending ? 'asc' : 'desc';
  const rows = (await executor.all(
    (position ? query.from.where(beyond(position, ascending)) : query.from)
      .selectAll()
      .orderBy(sql.ref(column), direction)
      .orderBy('id', direction)
      .limit(request.size + 1),
  )) as Row[];
  const moreBeyond = rows.length > request.size;
  const pageRows = rows.slice(0, request.size);
  if (!forward) pageRows.reverse();

  // Elements on the other side of the key: the complement of the region the key opened.
  let otherSide = false;
  if (position) {
    const complement = { ...position, inclusive: !position.inclusive };
    const side = query.from.where(beyond(complement, !ascending)).select(sql<number>`1`.as('one')).limit(1);
    otherSide = (await executor.first(side)) !== undefined;
  }

  const cursor = (side: 'after' | 'before', p: Position | undefined): Cursor => {
    const base = { size: request.size, sort: request.sort, order: request.order };
    return p === undefined ? base : { [side]: encodeKey(request.sort, p), ...base };
  };
  const at = (row: Row | undefined): Position | undefined =>
    row === undefined
      ? undefined
      : {
          value: (row as Record<string, unknown>)[column] as string | number,
          id: (row as Record<string, unknown>).id as string,
          inclusive: false,
        };
  const first = at(pageRows[0]);
  const last = at(pageRows[pageRows.length - 1]);
  // On an empty page both neighbours start at the key itself, split so that together
  // they cover everything.
  const edge = position && { ...position, inclusive: !position.inclusive };

  const page: Page<T> = { elements: pageRows.map(query.toElement) };
  const hasPrevious = forward ? otherSide : moreBeyond;
  const hasNext = forward ? moreBeyond : otherSide;
  if (hasPrevious) page.previous = cursor('before', first ?? (forward ? edge : position));
  if (hasNext) page.next = cursor('after', last ?? (forward ? position : edge));
  return page;
}
