import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Values sealed with AES-256-GCM under the server's identity key, which never enters the
 * database: a sealed value is a version byte, a random 12-byte nonce (new for every value
 * sealed, so no nonce is used twice under one key), the 16-byte authentication tag, then the
 * ciphertext. Each value is bound to a context (the identity it belongs to) as associated data:
 * a sealed value copied into another row does not open there.
 */
export interface SecretBox {
  seal(plaintext: string, context: string): Buffer;
  /** Throws SecretBoxError when the value was sealed under another key, or changed. */
  open(sealed: Uint8Array, context: string): string;
  /** Names the key without revealing it: the same key always gives the same fingerprint. */
  readonly fingerprint: string;
}

/** A sealed value that does not open: another key sealed it, or it was changed. */
export class SecretBoxError extends Error {}

export const SECRET_KEY_BYTES = 32;
const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + NONCE_BYTES + TAG_BYTES;

export function createSecretBox(key: Uint8Array): SecretBox {
  if (key.length !== SECRET_KEY_BYTES) throw new Error(`a secret key has ${SECRET_KEY_BYTES} bytes`);
  const fingerprint = createHmac('sha256', key)
    .update('pipewright identity key fingerprint')
    .digest('hex')
    .slice(0, 32);
  return {
    fingerprint,
    seal(plaintext, context) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return Buffer.concat([Buffer.of(VERSION), nonce, cipher.getAuthTag(), body]);
    },
    open(sealed, context) {
      const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
      if (bytes.length < HEADER_BYTES || bytes[0] !== VERSION) {
        throw new SecretBoxError('the sealed value is malformed');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(1, 1 + NONCE_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(bytes.subarray(1 + NONCE_BYTES, HEADER_BYTES));
      try {
        return Buffer.concat([decipher.update(bytes.subarray(HEADER_BYTES)), decipher.final()]).toString(
          'utf8',
        );
      } catch {
        throw new SecretBoxError('the sealed value does not open with this key: another key sealed it');
      }
    },
  };
}

/** A new random key, as the text of a key file (base64, one line). */
export function newSecretKeyText(): string {
  return `${randomBytes(SECRET_KEY_BYTES).toString('base64')}\n`;
}

/**
 * The key a key file holds: 32 bytes in base64 (as newSecretKeyText writes them) or in hex,
 * surrounding white space ignored. Throws an Error saying what is wrong otherwise.
 */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) return Buffer.from(trimmed, 'base64');
  throw new Error(
    `a key is ${SECRET_KEY_BYTES} random bytes in base64 (44 characters) or hex (64), such as the output of \`openssl rand -base64 32\``,
  );
}
