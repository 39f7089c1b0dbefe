import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createOutputMask, MASK, secretsToMask } from '../../../../src/domain/secrets/output-mask.js';

/** The text `chunks` make once masked, as a step recorder stores it. */
function maskChunks(secrets: string[], chunks: string[]): string {
  const mask = createOutputMask(secrets);
  return chunks.map((chunk) => mask.push(chunk)).join('') + mask.end();
}

describe('createOutputMask', () => {
  it.each([
    ['a whole secret', ['hunter2'], ['login hunter2 ok\n'], `login ${MASK} ok\n`],
    ['a secret split across chunks', ['hunter2'], ['login hun', 'te', 'r2 ok\n'], `login ${MASK} ok\n`],
    ['every occurrence', ['s3cr3t'], ['s3cr3ts3cr3t and s3cr3t\n'], `${MASK}${MASK} and ${MASK}\n`],
    ['overlapping secrets as one', ['abcd', 'cdef'], ['xabcdefx'], `x${MASK}x`],
    ['the start of a secret that never completes', ['hunter2'], ['hunt', 'ing\n'], 'hunting\n'],
    ['the start of a secret at a cut end', ['hunter2'], ['password: hunt'], `password: ${MASK}`],
    ['a short secret inside the start of a longer one', ['xab', 'abcd'], ['..xab', 'zz'], `..${MASK}zz`],
    ['a longer secret completed after a shorter one', ['ab', 'abcd'], ['[ab', 'cd]'], `[${MASK}]`],
    ['nothing without secrets', [], ['plain ', 'text'], 'plain text'],
  ])('masks %s', (_case, secrets, chunks, expected) => {
    expect(maskChunks(secrets, chunks)).toBe(expected);
  });

  it('stores at once what cannot be the start of a secret, and holds back only what can', () => {
    const mask = createOutputMask(['hunter2']);
    expect(mask.push('line one\n')).toBe('line one\n');
    expect(mask.push('pass: hun')).toBe('pass: ');
    expect(mask.push('gry\n')).toBe('hungry\n');
  });

  it('leaves no secret in the output, however the output is split', () => {
    const alphabet = fc.constantFrom('a', 'b', 'c', '\n');
    const word = fc.array(alphabet, { minLength: 1, maxLength: 6 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 3 }),
        fc.array(fc.oneof(word, fc.nat(2)), { maxLength: 12 }),
        fc.array(fc.nat(40), { maxLength: 6 }),
        (secrets, parts, cuts) => {
          const text = parts
            .map((part) => (typeof part === 'number' ? (secrets[part] ?? '') : part))
            .join('');
          const bounds = [...new Set([0, ...cuts.filter((c) => c < text.length), text.length])].sort(
            (a, b) => a - b,
          );
          const chunks = bounds.slice(1).map((end, i) => text.slice(bounds[i], end));
          const out = maskChunks(secrets, chunks);
          for (const secret of secrets) expect(out.split(MASK).join('\u0000')).not.toContain(secret);
          expect(out).toBe(maskChunks(secrets, [text]));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('secretsToMask', () => {
  it('masks each value, and each line of a value of several lines', () => {
    expect(secretsToMask(['token', '', '-----BEGIN KEY-----\r\nabc\r\n-----END KEY-----\n'])).toEqual([
      'token',
      '-----BEGIN KEY-----\r\nabc\r\n-----END KEY-----\n',
      '-----BEGIN KEY-----',
      'abc',
      '-----END KEY-----',
    ]);
  });
});
