import { randomBytes } from 'node:crypto';

// KSUIDs: 4 bytes of seconds since the KSUID epoch then 16 random bytes, written as 27
// base62 characters. They sort by creation time, which keyset pagination by id relies on.
const KSUID_EPOCH_SECONDS = 1_400_000_000;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const LENGTH = 27;

export const ID_PATTERN = /^[0-9A-Za-z]{27}$/;

export function newId(now: Date = new Date()): string {
  const bytes = Buffer.alloc(20);
  bytes.writeUInt32BE(Math.floor(now.getTime() / 1000) - KSUID_EPOCH_SECONDS, 0);
  randomBytes(16).copy(bytes, 4);
  let value = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (value > 0n) {
    out = ALPHABET[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out.padStart(LENGTH, '0');
}
