import { describe, expect, it } from 'vitest';
import { pointer } from '../../../src/domain/json-pointer.js';

describe('pointer', () => {
  it.each([
    ['', [], ''],
    ['', ['specs', 7, 'name'], '/specs/7/name'],
    ['/specs/0', ['data', 'a/b'], '/specs/0/data/a~1b'],
    ['', ['~x', '~/', 0], '/~0x/~0~1/0'],
    ['/a', [''], '/a/'],
  ])('joins %j and %j as %j, escaping ~ and / (RFC 6901)', (base, tokens, expected) => {
    expect(pointer(base, ...tokens)).toBe(expected);
  });
});
