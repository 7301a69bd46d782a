export interface PoliteFetchOptions {
  /** What sends each request; the global fetch by default. */
  fetch?: typeof fetch;
  /** Tries after the first, for a rate-limited or briefly failing request. */
  maxRetries?: number;
  /** A wait longer than this is not waited out: the request fails with the service's answer. */
  maxWaitMs?: number;
  initialBackoffMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * How long the service asks us to wait, or null when it is not a rate limit: `Retry-After`
 * (seconds or a date), else GitHub's `x-ratelimit-reset` once `x-ratelimit-remaining` is 0.
 */
export const rateLimitWaitMs = (response: Response, now = Date.now()): number | null => {
  const retryAfter = response.headers.get('retry-after');
  if (retryAfter !== null) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const at = Date.parse(retryAfter);
    if (Number.isFinite(at)) return Math.max(0, at - now);
  }
  if (response.status === 429) return null;
  const reset = response.headers.get('x-ratelimit-reset');
  if (response.headers.get('x-ratelimit-remaining') === '0' && reset !== null && Number.isFinite(Number(reset))) {
    return Math.max(0, Number(reset) * 1000 - now);
  }
  return null;
};

/**
 * A `fetch` that honours rate limits: a 429, or a 403 that carries a rate-limit wait, is retried
 * after the wait the service names; a 429 without one, and a 502/503/504, back off with doubling
 * delays. Anything else is returned as the service answered.
 */
export const politeFetch = ({
  fetch: send = fetch,
  maxRetries = 5,
  maxWaitMs = 60_000,
  initialBackoffMs = 500,
  sleep = sleepFor,
}: PoliteFetchOptions = {}): typeof fetch => {
  return async (input, init) => {
    let backoffMs = initialBackoffMs;
    for (let attempt = 0; ; attempt++) {
      const response = await send(input, init);
      const limited = response.status === 429 || response.status === 403;
      const named = limited ? rateLimitWaitMs(response) : null;
      const transient = response.status === 429 || [502, 503, 504].includes(response.status);
      const waitMs = named ?? (transient ? backoffMs : null);
      if (waitMs === null || attempt >= maxRetries || waitMs > maxWaitMs) return response;
      await response.body?.cancel();
      await sleep(waitMs);
      backoffMs *= 2;
    }
  };
};
