import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ID_PATTERN } from './ids.js';

// An API key reads `pwk_<key id>_<secret>`. The id locates the stored row; the secret
// (32 random bytes) is kept only as a SHA-256 hash.
const PREFIX = 'pwk_';

export interface KeyParts {
  id: string;
  secret: string;
}

export function makeSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function formatKey(parts: KeyParts): string {
  return `${PREFIX}${parts.id}_${parts.secret}`;
}

export function parseKey(key: string): KeyParts | undefined {
  if (!key.startsWith(PREFIX)) return undefined;
  const id = key.slice(PREFIX.length, PREFIX.length + 27);
  const separator = key.charAt(PREFIX.length + 27);
  const secret = key.slice(PREFIX.length + 28);
  if (!ID_PATTERN.test(id) || separator !== '_' || !/^[A-Za-z0-9_-]{43}$/.test(secret)) return undefined;
  return { id, secret };
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

export function secretMatches(secret: string, hash: Buffer): boolean {
  const candidate = hashSecret(secret);
  return candidate.length === hash.length && timingSafeEqual(candidate, hash);
}
