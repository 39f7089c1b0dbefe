import { isDeepStrictEqual } from 'node:util';
import { compileFilterPattern, patternMatches } from './filter-patterns.js';

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
// it; a value that is not a string, or is longer than the matched length, never matches a
// regular expression. A pattern the engine refuses (installed before installs checked it)
// makes its filter hold for no event: a trigger does not fire on a filter it cannot read.
function holds(filter: TriggerFilter, value: unknown): boolean {
  const present = value !== MISSING;
  if ('is_equal_to' in filter) return present && isDeepStrictEqual(value, filter.is_equal_to);
  if ('is_not_equal_to' in filter) return !present || !isDeepStrictEqual(value, filter.is_not_equal_to);
  const pattern = filter.matches ?? filter.does_not_match;
  if (pattern === undefined) return true;
  const compiled = compileFilterPattern(pattern);
  if ('problem' in compiled) return false;
  const matched = typeof value === 'string' && patternMatches(compiled.regex, value);
  return filter.matches !== undefined ? matched : !matched;
}

/** True when every filter holds for the event data. */
export function filtersMatch(filters: TriggerFilter[] | undefined, data: unknown): boolean {
  return (filters ?? []).every((filter) => holds(filter, resolvePointer(data, filter.path)));
}
