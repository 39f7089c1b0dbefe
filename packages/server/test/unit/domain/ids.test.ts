import { describe, expect, it } from 'vitest';
import { encodeKsuid, ID_PATTERN, newId } from '../../../src/domain/ids.js';

describe('ids', () => {
  it('encodes the examples of the KSUID format', () => {
    expect(encodeKsuid(Buffer.alloc(20))).toBe('000000000000000000000000000');
    expect(encodeKsuid(Buffer.alloc(20, 0xff))).toBe('aWgEPTl1tmebfsQzFP4bxwgy80V');
    expect(encodeKsuid(Buffer.from('0669F7EFB5A1CD34B5F99D1154FB6853345C9735', 'hex'))).toBe(
      '0ujtsYcgvSTl8PAuAdqWYSMnLOv',
    );
  });

  it('sorts as its bytes do', () => {
    const low = Buffer.from('0669F7EF00000000000000000000000000000001', 'hex');
    const high = Buffer.from('0669F7EF00000000000000000000000000000002', 'hex');
    const later = Buffer.from('0669F7F000000000000000000000000000000000', 'hex');
    expect([encodeKsuid(later), encodeKsuid(high), encodeKsuid(low)].sort()).toEqual([
      encodeKsuid(low),
      encodeKsuid(high),
      encodeKsuid(later),
    ]);
  });

  it('makes distinct ids in creation order of their seconds, past a refill of its random bytes', () => {
    const first = new Date('2026-01-01T00:00:00Z');
    const ids = Array.from({ length: 600 }, (_, i) => newId(new Date(first.getTime() + i * 1000)));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(ID_PATTERN);
    expect([...ids].sort()).toEqual(ids);
  });
});
