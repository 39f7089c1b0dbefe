import { describe, expect, it } from 'vitest';
import { createSuggest, quotedList } from '../../../../src/domain/resources/wording.js';

describe('quotedList', () => {
  it.each([
    [['a'], 'or', '"a"'],
    [['a', 'b'], 'or', '"a" or "b"'],
    [['a', 'b', 'c'], 'and', '"a", "b" and "c"'],
    [[1, true], 'or', '1 or true'],
  ] as const)('writes %j with %s', (values, conjunction, expected) => {
    expect(quotedList(values, conjunction)).toBe(expected);
  });
});

describe('createSuggest', () => {
  const candidates = ['build', 'test', 'release', 'deploy-staging', 'b'];

  it.each([
    ['a swap of two letters', 'biuld', ' (did you mean "build"?)'],
    ['a missing letter', 'relase', ' (did you mean "release"?)'],
    ['an extra letter', 'testt', ' (did you mean "test"?)'],
    ['two edits in a long name', 'deploy-stagign2', ' (did you mean "deploy-staging"?)'],
    ['nothing close', 'lint', ''],
    ['a short name one letter off', 'a', ''],
  ])('suggests for %s', (_case, name, expected) => {
    expect(createSuggest()(name, candidates)).toBe(expected);
  });

  it('stops suggesting once its budget of comparisons is spent', () => {
    const suggest = createSuggest(6);
    expect(suggest('biuld', candidates)).toBe(' (did you mean "build"?)');
    expect(suggest('relase', candidates)).toBe('');
  });
});
