/** What taking one request from a budget found. */
export interface Taken {
  allowed: boolean;
  /** The budget's size: requests per minute. */
  limit: number;
  /** Whole requests left after this one. */
  remaining: number;
  /** Unix time (seconds) when the bucket is full again. */
  resetAt: number;
  /** Seconds until the next request is allowed; 0 when this one was. */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  at: number;
  perMinute: number;
}

/** Buckets are forgotten once full again (a full bucket and none are the same); swept every this many takes. */
const SWEEP_EVERY = 1_000;

/**
 * Token buckets, one per key: each holds up to `perMinute` tokens and refills continuously at
 * `perMinute` a minute; a request takes one. A budget changed at runtime applies at once: the
 * bucket keeps its tokens, up to the new size. `now` (milliseconds) is the clock.
 */
export const createTokenBuckets = (now: () => number = Date.now) => {
  const buckets = new Map<string, Bucket>();
  let takes = 0;

  const refilled = (bucket: Bucket | undefined, perMinute: number, at: number) =>
    bucket ? Math.min(perMinute, bucket.tokens + ((at - bucket.at) * perMinute) / 60_000) : perMinute;

  const sweep = (at: number) => {
    for (const [key, bucket] of buckets) if (refilled(bucket, bucket.perMinute, at) >= bucket.perMinute) buckets.delete(key);
  };

  return {
    take(key: string, perMinute: number): Taken {
      const at = now();
      if (++takes % SWEEP_EVERY === 0) sweep(at);
      const tokens = refilled(buckets.get(key), perMinute, at);
      const allowed = tokens >= 1;
      const left = allowed ? tokens - 1 : tokens;
      buckets.set(key, { tokens: left, at, perMinute });
      const msPerToken = 60_000 / perMinute;
      return {
        allowed,
        limit: perMinute,
        remaining: Math.floor(left),
        resetAt: Math.ceil((at + (perMinute - left) * msPerToken) / 1000),
        retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(((1 - left) * msPerToken) / 1000)),
      };
    },
  };
};

export type TokenBuckets = ReturnType<typeof createTokenBuckets>;
