import { DomainError } from './errors.js';

// Keyset pagination keys. A key designates a position in a sorted collection: the sort
// value and id of an element, and whether the element itself belongs to the region the key
// opens (only the keys the server derives for an empty page need that). Keys are opaque to
// clients: base64url of a small JSON array, bound to the sort they were made for.

export type SortValue = string | number;
export type Order = 'asc' | 'desc';

export interface Position {
  value: SortValue;
  id: string;
  inclusive: boolean;
}

export interface PageRequest {
  after?: string | undefined;
  before?: string | undefined;
  size: number;
  sort: string;
  order: Order;
}

export interface Cursor {
  after?: string;
  before?: string;
  size: number;
  sort: string;
  order: Order;
}

export interface Page<T> {
  elements: T[];
  previous?: Cursor;
  next?: Cursor;
}

export const DEFAULT_PAGE_SIZE = 20;

export function encodeKey(sort: string, position: Position): string {
  const payload = [sort, position.value, position.id, position.inclusive ? 1 : 0];
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

export function decodeKey(key: string, sort: string, parameter: 'after' | 'before'): Position {
  const invalid = (reason: string) =>
    new DomainError('invalid_query_parameter', `invalid query parameter ${parameter}: ${reason}`, {
      parameter,
      reason,
    });
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(key, 'base64url').toString('utf8'));
  } catch {
    throw invalid('not a key returned by this API');
  }
  if (!Array.isArray(payload) || payload.length !== 4) throw invalid('not a key returned by this API');
  const [keySort, value, id, inclusive] = payload as unknown[];
  if (keySort !== sort) throw invalid(`the key was made for sort "${String(keySort)}", not "${sort}"`);
  if ((typeof value !== 'string' && typeof value !== 'number') || typeof id !== 'string') {
    throw invalid('not a key returned by this API');
  }
  if (inclusive !== 0 && inclusive !== 1) throw invalid('not a key returned by this API');
  return { value, id, inclusive: inclusive === 1 };
}
