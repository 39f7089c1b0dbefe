import { hash, timingSafeEqual } from 'node:crypto';
import { ID_PATTERN } from '../ids.js';
import { randomView } from '../random.js';

// An API key reads `pwk_<key id>_<secret>` (an account's key) or `pwt_<key id>_<secret>`
// (the key of a running task). The id locates the stored row; the secret (32 random
// bytes) is kept only as a SHA-256 hash.
const PREFIXES = { account: 'pwk_', task: 'pwt_' } as const;

export type KeyKind = keyof typeof PREFIXES;

export interface KeyParts {
  kind: KeyKind;
  id: string;
  secret: string;
}

export function makeSecret(): string {
  return randomView(32).toString('base64url');
}

export function formatKey(parts: KeyParts): string {
  return `${PREFIXES[parts.kind]}${parts.id}_${parts.secret}`;
}

export function parseKey(key: string): KeyParts | undefined {
  const kind = (Object.keys(PREFIXES) as KeyKind[]).find((k) => key.startsWith(PREFIXES[k]));
  if (!kind) return undefined;
  const start = PREFIXES[kind].length;
  const id = key.slice(start, start + 27);
  const separator = key.charAt(start + 27);
  const secret = key.slice(start + 28);
  if (!ID_PATTERN.test(id) || separator !== '_' || !/^[A-Za-z0-9_-]{43}$/.test(secret)) return undefined;
  return { kind, id, secret };
}

export function hashSecret(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

export function secretMatches(secret: string, hash: Buffer): boolean {
  const candidate = hashSecret(secret);
  return candidate.length === hash.length && timingSafeEqual(candidate, hash);
}
