import type { RequestHandler } from 'express';
import { DomainError } from '../domain/errors.js';
import { principalIfAny } from './context.js';
import { pathBucket } from './public-routes.js';

export interface RateLimit {
  /** Sustained requests per second allowed per API key. */
  perSecond: number;
  /** Requests that may arrive at once before the sustained rate applies. */
  burst: number;
}

/** Buckets kept before the full ones are dropped: each task attempt has a key of its own. */
const PRUNE_ABOVE = 10_000;

/** A token bucket per API key (per path for the public routes), in memory: the server is one process. */
export function rateLimit(limit: RateLimit, clock: () => number = Date.now): RequestHandler {
  const buckets = new Map<string, { tokens: number; updated: number }>();
  const refilled = (bucket: { tokens: number; updated: number }, now: number) =>
    Math.min(limit.burst, bucket.tokens + ((now - bucket.updated) / 1000) * limit.perSecond);
  let pruneAt = PRUNE_ABOVE;
  return (req, res, next) => {
    // A request without a key (a webhook delivery) counts against its path: each webhook's own.
    const keyId = principalIfAny(res)?.keyId ?? pathBucket(req.path);
    const now = clock();
    if (buckets.size >= pruneAt) {
      // A full bucket is what an absent one would be: dropping it changes nothing. Doubling
      // the threshold keeps the sweeps rare when most buckets are in use.
      for (const [id, bucket] of buckets) if (refilled(bucket, now) >= limit.burst) buckets.delete(id);
      pruneAt = Math.max(PRUNE_ABOVE, 2 * buckets.size);
    }
    const bucket = buckets.get(keyId) ?? { tokens: limit.burst, updated: now };
    bucket.tokens = refilled(bucket, now);
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
