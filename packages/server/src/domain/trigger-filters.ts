import { isDeepStrictEqual } from 'node:util';

/** A trigger filter: a JSON pointer into the event data and one predicate on the value there. */
export interface TriggerFilter {
  path: string;
  is_equal_to?: unknown;
  is_not_equal_to?: unknown;
  matches?: string;
  does_not_match?: string;
}

const MISSING = Symbol('missing');

/** Resolves an RFC 6901 pointer; the empty pointer is the whole document. */
export function resolvePointer(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  let current: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(current) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < current.length) {
      current = current[Number(token)];
    } else if (
      current !== null &&
      typeof current === 'object' &&
      !Array.isArray(current) &&
      Object.hasOwn(current, token)
    ) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return MISSING;
    }
  }
  return current;
}

// A missing value equals nothing and matches nothing, so the negative predicates hold for
// it; a value that is not a string never matches a regular expression.
function holds(filter: TriggerFilter, value: unknown): boolean {
  const present = value !== MISSING;
  const matches = (pattern: string) =>
    present && typeof value === 'string' && new RegExp(pattern, 'u').test(value);
  if ('is_equal_to' in filter) return present && isDeepStrictEqual(value, filter.is_equal_to);
  if ('is_not_equal_to' in filter) return !present || !isDeepStrictEqual(value, filter.is_not_equal_to);
  if (filter.matches !== undefined) return matches(filter.matches);
  if (filter.does_not_match !== undefined) return !matches(filter.does_not_match);
  return true;
}

/** True when every filter holds for the event data. */
export function filtersMatch(filters: TriggerFilter[] | undefined, data: unknown): boolean {
  return (filters ?? []).every((filter) => holds(filter, resolvePointer(data, filter.path)));
}
