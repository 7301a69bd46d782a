import { elapsedMs } from './progressThrottle.js';

/** Doubling delays between tries while a service is unavailable. */
export interface Backoff {
  /** The delay before the next try; each call doubles the following one, up to the maximum. */
  next(): number;
}

export const backoff = (initialMs: number, maxMs: number): Backoff => {
  let delay = initialMs;
  return {
    next() {
      const current = delay;
      delay = Math.min(maxMs, delay * 2);
      return current;
    },
  };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits `ms`, calling `check` every 200 ms at most: a check that throws ends the wait early. */
export const pause = async (ms: number, check: () => void): Promise<void> => {
  const until = elapsedMs() + ms;
  for (let left = ms; left > 0; left = until - elapsedMs()) {
    check();
    await sleep(Math.min(200, left));
  }
  check();
};
