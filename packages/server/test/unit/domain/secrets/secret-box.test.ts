import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createSecretBox,
  newSecretKeyText,
  parseSecretKey,
  SECRET_KEY_BYTES,
  SecretBoxError,
} from '../../../../src/domain/secrets/secret-box.js';

const key = () => randomBytes(SECRET_KEY_BYTES);

describe('createSecretBox', () => {
  it('opens what it sealed, in the same context only', () => {
    const box = createSecretBox(key());
    const sealed = box.seal('hunter2 ✓', 'identity:a');
    expect(box.open(sealed, 'identity:a')).toBe('hunter2 ✓');
    expect(() => box.open(sealed, 'identity:b')).toThrow(SecretBoxError);
  });

  it('seals the same value differently each time, without the value in clear', () => {
    const box = createSecretBox(key());
    const [one, two] = [box.seal('same value', 'c'), box.seal('same value', 'c')];
    expect(one.equals(two)).toBe(false);
    expect(one.includes(Buffer.from('same value'))).toBe(false);
  });

  it('refuses a value sealed under another key, or changed', () => {
    const sealed = createSecretBox(key()).seal('value', 'c');
    expect(() => createSecretBox(key()).open(sealed, 'c')).toThrow(/another key sealed it/);
    const box = createSecretBox(key());
    const changed = box.seal('value', 'c');
    changed[changed.length - 1] = (changed.at(-1) ?? 0) ^ 1;
    expect(() => box.open(changed, 'c')).toThrow(SecretBoxError);
    expect(() => box.open(Buffer.from('short'), 'c')).toThrow(/malformed/);
  });

  it('names its key by a fingerprint that tells one key from another', () => {
    const bytes = key();
    expect(createSecretBox(bytes).fingerprint).toBe(createSecretBox(Buffer.from(bytes)).fingerprint);
    expect(createSecretBox(bytes).fingerprint).not.toBe(createSecretBox(key()).fingerprint);
    expect(createSecretBox(bytes).fingerprint).not.toContain(bytes.toString('hex').slice(0, 8));
  });
});

describe('parseSecretKey', () => {
  it('reads the keys newSecretKeyText writes, and hex keys', () => {
    expect(parseSecretKey(newSecretKeyText())).toHaveLength(SECRET_KEY_BYTES);
    const hex = randomBytes(SECRET_KEY_BYTES).toString('hex');
    expect(parseSecretKey(`  ${hex}\n`).toString('hex')).toBe(hex);
  });

  it.each([
    ['an empty file', ''],
    ['a short key', randomBytes(16).toString('base64')],
    ['a passphrase', 'correct horse battery staple'],
  ])('refuses %s, saying what a key is', (_case, text) => {
    expect(() => parseSecretKey(text)).toThrow(/32 random bytes in base64/);
  });
});
