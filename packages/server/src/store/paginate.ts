import {
  type Cursor,
  decodeKey,
  encodeKey,
  type Page,
  type PageRequest,
  type Position,
} from '../domain/cursor.js';
import type { Db } from './db.js';

/**
 * One keyset query over one table: `where` narrows the collection (organization, project,
 * filters), `sorts` maps each sort name to its column. Every sort is ordered by (column, id)
 * so that equal values keep a stable order, and each needs an index ending in those columns.
 */
export interface KeysetQuery<Row, T> {
  table: string;
  where: string[];
  params: unknown[];
  sorts: Record<string, string>;
  request: PageRequest;
  toElement(row: Row): T;
}

export function paginate<Row extends Record<string, unknown>, T>(
  db: Db,
  query: KeysetQuery<Row, T>,
): Page<T> {
  const { request } = query;
  const column = query.sorts[request.sort];
  if (column === undefined) throw new Error(`no sort ${request.sort} on ${query.table}`);
  const forward = request.before === undefined;
  const key = request.after ?? request.before;
  const position = key === undefined ? undefined : decodeKey(key, request.sort, forward ? 'after' : 'before');

  // Scanning "forward" in a desc page, or "backward" in an asc page, walks the index downwards.
  const ascending = (request.order === 'asc') === forward;
  const tuple = column === 'id' ? 'id' : `(${column}, id)`;
  const bind = (p: Position) => (column === 'id' ? [p.id] : [p.value, p.id]);
  const holder = column === 'id' ? '?' : '(?, ?)';
  const beyond = (p: Position, upwards: boolean) =>
    `${tuple} ${upwards ? '>' : '<'}${p.inclusive ? '=' : ''} ${holder}`;

  const where = [...query.where];
  const params = [...query.params];
  if (position) {
    where.push(beyond(position, ascending));
    params.push(...bind(position));
  }
  const direction = ascending ? 'ASC' : 'DESC';
  const rows = db
    .prepare(
      `SELECT * FROM ${query.table} WHERE ${where.join(' AND ') || '1'}
       ORDER BY ${column} ${direction}, id ${direction} LIMIT ?`,
    )
    .all(...params, request.size + 1) as Row[];
  const moreBeyond = rows.length > request.size;
  const pageRows = rows.slice(0, request.size);
  if (!forward) pageRows.reverse();

  // Elements on the other side of the key: the complement of the region the key opened.
  let otherSide = false;
  if (position) {
    const complement = { ...position, inclusive: !position.inclusive };
    const sideWhere = [...query.where, beyond(complement, !ascending)];
    otherSide =
      db
        .prepare(`SELECT 1 FROM ${query.table} WHERE ${sideWhere.join(' AND ')} LIMIT 1`)
        .get(...query.params, ...bind(complement)) !== undefined;
  }

  const cursor = (side: 'after' | 'before', p: Position | undefined): Cursor => {
    const base = { size: request.size, sort: request.sort, order: request.order };
    return p === undefined ? base : { [side]: encodeKey(request.sort, p), ...base };
  };
  const at = (row: Row | undefined): Position | undefined =>
    row === undefined
      ? undefined
      : { value: row[column] as string | number, id: row.id as string, inclusive: false };
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
