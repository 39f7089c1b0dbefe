import { openapiDocument } from '@pipewright/types';
import { describe, expect, it } from 'vitest';
import {
  compileFilterPattern,
  MAX_MATCHED_LENGTH,
  MAX_PATTERN_LENGTH,
  PATTERN_CACHE_SIZE,
} from '../../../../src/domain/events/filter-patterns.js';
import { filtersMatch, type TriggerFilter } from '../../../../src/domain/events/trigger-filters.js';

const a = (count: number) => 'a'.repeat(count);

describe('filtersMatch', () => {
  it.each<[string, TriggerFilter, unknown, boolean]>([
    ['is_equal_to, equal', { path: '/b', is_equal_to: 'main' }, { b: 'main' }, true],
    ['is_equal_to, deep', { path: '/w', is_equal_to: { id: [1] } }, { w: { id: [1] } }, true],
    ['is_equal_to, missing', { path: '/b', is_equal_to: null }, {}, false],
    ['is_not_equal_to, missing', { path: '/b', is_not_equal_to: 'main' }, {}, true],
    ['is_not_equal_to, equal', { path: '/b', is_not_equal_to: 'main' }, { b: 'main' }, false],
    ['the empty path, the whole data', { path: '', is_equal_to: 7 }, 7, true],
    ['a pointer into an array', { path: '/c/1', is_equal_to: 'y' }, { c: ['x', 'y'] }, true],
    ['an escaped pointer', { path: '/a~1b/c~0d', is_equal_to: 1 }, { 'a/b': { 'c~d': 1 } }, true],
    ['matches', { path: '/r', matches: '^refs/tags/v\\d+' }, { r: 'refs/tags/v12' }, true],
    ['matches, no match', { path: '/r', matches: '^refs/tags/' }, { r: 'refs/heads/main' }, false],
    ['matches, unanchored', { path: '/r', matches: 'main' }, { r: 'not-main-branch' }, true],
    ['matches, a number', { path: '/r', matches: '12' }, { r: 12 }, false],
    ['matches, missing', { path: '/r', matches: '' }, {}, false],
    ['does_not_match', { path: '/r', does_not_match: '\\[skip ci\\]' }, { r: 'fix' }, true],
    ['does_not_match, a match', { path: '/r', does_not_match: 'skip' }, { r: 'skip it' }, false],
    ['does_not_match, a number', { path: '/r', does_not_match: '1' }, { r: 1 }, true],
    ['does_not_match, missing', { path: '/r', does_not_match: 'x' }, {}, true],
    ['RE2 inline flags', { path: '/r', matches: '(?i)^main$' }, { r: 'MAIN' }, true],
    ['RE2 Unicode classes', { path: '/r', matches: '^\\pL+$' }, { r: 'café' }, true],
    ['RE2 named groups', { path: '/r', matches: '^v(?P<major>\\d+)' }, { r: 'v3' }, true],
    ['a dot is one code point', { path: '/r', matches: '^.$' }, { r: '😀' }, true],
    // Backtracking engines take 2^n steps on these: RE2 answers in one pass.
    ['a nested repetition, 30 a and !', { path: '/s', matches: '^(a+)+$' }, { s: `${a(30)}!` }, false],
    [
      'a nested repetition on a value at the limit',
      { path: '/s', matches: '^(a+)+$' },
      { s: `${a(MAX_MATCHED_LENGTH - 1)}!` },
      false,
    ],
    ['a value at the limit is matched', { path: '/s', matches: '^a+$' }, { s: a(MAX_MATCHED_LENGTH) }, true],
    [
      'the limit counts characters, not UTF-16 units',
      { path: '/s', matches: '^😀+$' },
      { s: '😀'.repeat(MAX_MATCHED_LENGTH) },
      true,
    ],
    [
      'a value past the limit never matches',
      { path: '/s', matches: '^a+$' },
      { s: a(MAX_MATCHED_LENGTH + 1) },
      false,
    ],
    [
      'so does_not_match holds for it',
      { path: '/s', does_not_match: '^a+$' },
      { s: a(MAX_MATCHED_LENGTH + 1) },
      true,
    ],
    // Patterns installed before installs checked them: the filter holds for no event.
    ['matches with a backreference', { path: '/s', matches: '(a)\\1' }, { s: 'aa' }, false],
    ['does_not_match with a backreference', { path: '/s', does_not_match: '(a)\\1' }, { s: 'b' }, false],
    ['does_not_match with a lookahead', { path: '/s', does_not_match: 'a(?=b)' }, { s: 'c' }, false],
    ['a pattern too large', { path: '/s', does_not_match: '\\w{1000}\\w{1000}' }, { s: 'x' }, false],
    ['a pattern too long', { path: '/s', does_not_match: a(MAX_PATTERN_LENGTH + 1) }, { s: 'x' }, false],
  ])('%s', (_case, filter, data, expected) => {
    expect(filtersMatch([filter], data)).toBe(expected);
  });

  it('holds with no filters, and needs every filter to hold', () => {
    expect(filtersMatch(undefined, {})).toBe(true);
    const filters = [
      { path: '/a', is_equal_to: 1 },
      { path: '/b', matches: '^x' },
    ];
    expect(filtersMatch(filters, { a: 1, b: 'xy' })).toBe(true);
    expect(filtersMatch(filters, { a: 1, b: 'yx' })).toBe(false);
  });
});

describe('compileFilterPattern', () => {
  it.each([
    [
      '(a)\\1',
      'must be a regular expression in RE2 syntax (no backreferences, no lookaround): invalid escape sequence: `\\1`',
    ],
    [
      'a(?=b)',
      'must be a regular expression in RE2 syntax (no backreferences, no lookaround): invalid or unsupported Perl syntax: `(?=`',
    ],
    [
      '(?<!a)b',
      'must be a regular expression in RE2 syntax (no backreferences, no lookaround): invalid named capture: `(?<!a)b`',
    ],
    [
      '[a-',
      'must be a regular expression in RE2 syntax (no backreferences, no lookaround): missing closing ]: `[a-`',
    ],
    [
      'a{1001}',
      'must be a regular expression in RE2 syntax (no backreferences, no lookaround): invalid repeat count: `{1001}`',
    ],
    [
      '\\w{1000}',
      'is too large: it compiles to 1002 instructions, at most 600 are allowed (a repetition such as x{100} counts x 100 times)',
    ],
    [a(MAX_PATTERN_LENGTH + 1), 'must be at most 500 characters long'],
  ])('refuses %s', (pattern, problem) => {
    expect(compileFilterPattern(pattern)).toEqual({ problem });
  });

  it.each(['', '^refs/heads/(main|release-\\d+)$', '(?i)skip', '\\w{400}', '😀'.repeat(MAX_PATTERN_LENGTH)])(
    'accepts %s',
    (pattern) => {
      expect(compileFilterPattern(pattern)).toHaveProperty('regex');
    },
  );

  it("refuses past the spec's maxLength, the same limit", () => {
    const { properties } = (
      openapiDocument.components as {
        schemas: Record<string, { properties: Record<string, { maxLength?: number }> }>;
      }
    ).schemas.TriggerFilter ?? { properties: {} };
    expect([properties.matches?.maxLength, properties.does_not_match?.maxLength]).toEqual([
      MAX_PATTERN_LENGTH,
      MAX_PATTERN_LENGTH,
    ]);
  });

  it('compiles a pattern once while it is among the most recently used', () => {
    const first = compileFilterPattern('^kept$');
    expect(compileFilterPattern('^kept$')).toBe(first);
    for (let index = 0; index < PATTERN_CACHE_SIZE - 1; index += 1) {
      compileFilterPattern(`^other-${index}$`);
      compileFilterPattern('^kept$');
    }
    expect(compileFilterPattern('^kept$')).toBe(first);
    for (let index = 0; index < PATTERN_CACHE_SIZE; index += 1) compileFilterPattern(`^evicting-${index}$`);
    expect(compileFilterPattern('^kept$')).not.toBe(first);
  });
});
