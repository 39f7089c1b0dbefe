import { describe, expect, it } from 'vitest';
import { OutputCapture } from '../../../src/runner/output.js';

function capture(limitBytes: number, chunks: Buffer[]) {
  const emitted: string[] = [];
  const output = new OutputCapture(limitBytes, (text) => emitted.push(text));
  for (const chunk of chunks) output.write(chunk);
  output.end();
  return { text: emitted.join(''), emitted, truncated: output.truncated };
}

const bytes = (...parts: (string | number[])[]) =>
  parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part)));

// "é" is c3 a9, "€" is e2 82 ac, "😀" is f0 9f 98 80.
describe('OutputCapture', () => {
  it.each([
    {
      name: 'everything under the limit',
      limit: 100,
      chunks: bytes('ab', 'cd'),
      text: 'abcd',
      truncated: false,
    },
    { name: 'exactly the limit', limit: 4, chunks: bytes('ab', 'cd'), text: 'abcd', truncated: false },
    { name: 'one byte over', limit: 3, chunks: bytes('ab', 'cd'), text: 'abc', truncated: true },
    { name: 'a limit of zero', limit: 0, chunks: bytes('a'), text: '', truncated: true },
    { name: 'no output', limit: 0, chunks: [], text: '', truncated: false },
    {
      name: 'a character split across chunks',
      limit: 100,
      chunks: bytes('a', [0xc3], [0xa9], 'b'),
      text: 'aéb',
      truncated: false,
    },
    {
      name: 'a 4-byte character in 4 chunks',
      limit: 100,
      chunks: bytes([0xf0], [0x9f], [0x98], [0x80]),
      text: '😀',
      truncated: false,
    },
    { name: 'a cut inside a 2-byte character', limit: 2, chunks: bytes('aé'), text: 'a', truncated: true },
    { name: 'a cut inside a 3-byte character', limit: 3, chunks: bytes('a€'), text: 'a', truncated: true },
    { name: 'a cut right after a character', limit: 4, chunks: bytes('a€b'), text: 'a€', truncated: true },
    {
      name: 'a cut inside a split character',
      limit: 2,
      chunks: bytes('a', [0xe2, 0x82], [0xac]),
      text: 'a',
      truncated: true,
    },
    {
      name: 'an incomplete last character',
      limit: 100,
      chunks: bytes('a', [0xe2, 0x82]),
      text: 'a\ufffd',
      truncated: false,
    },
  ])('keeps $name', ({ limit, chunks, text, truncated }) => {
    const result = capture(limit, chunks);
    expect(result.text).toBe(text);
    expect(result.truncated).toBe(truncated);
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(limit);
  });

  it('emits each chunk as it comes and nothing once cut', () => {
    const result = capture(5, bytes('ab', 'cd', 'ef', 'gh'));
    expect(result.emitted).toEqual(['ab', 'cd', 'e']);
  });
});
