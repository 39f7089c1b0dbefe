import type { RequestHandler } from 'express';
import { DomainError } from '../domain/errors.js';
import { principalOf } from './context.js';

export interface RateLimit {
  /** Sustained requests per second allowed per API key. */
  perSecond: number;
  /** Requests that may arrive at once before the sustained rate applies. */
  burst: number;
}

/** A token bucket per API key, in memory: the server is one process. */
export function rateLimit(limit: RateLimit, clock: () => number = Date.now): RequestHandler {
  const buckets = new Map<string, { tokens: number; updated: number }>();
  return (_req, res, next) => {
    const { keyId } = principalOf(res);
    const now = clock();
    const bucket = buckets.get(keyId) ?? { tokens: limit.burst, updated: now };
    bucket.tokens = Math.min(limit.burst, bucket.tokens + ((now - bucket.updated) / 1000) * limit.perSecond);
    bucket.updated = now;
    buckets.set(keyId, bucket);
    if (bucket.tokens < 1) {
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / limit.perSecond));
      throw new DomainError('rate_limited', `too many requests: retry in ${retryAfter} s`, {
        retry_after_seconds: retryAfter,
      });
    }
    bucket.tokens -= 1;
    next();
  };
}
