import { describe, expect, it } from 'vitest';
import { budgetUnder } from '../../src/http/api/endpointRateLimits.js';
import { createTokenBuckets } from '../../src/http/tokenBuckets.js';
import { DEFAULT_CLASS_LIMITS } from '../../src/domain/runtimeSettings.js';

/** A clock the test moves by hand. */
const manualClock = (start = 1_700_000_000_000) => {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
};

describe('token buckets', () => {
  it('refills one token every 60/limit seconds after the budget is spent', () => {
    const clock = manualClock();
    const buckets = createTokenBuckets(clock.now);
    const taken = Array.from({ length: 5 }, () => buckets.take('acme|config', 5));
    expect(taken.map((t) => [t.allowed, t.remaining])).toEqual([
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
    ]);
    const refused = buckets.take('acme|config', 5);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 12 });

    clock.advance(11_999);
    expect(buckets.take('acme|config', 5)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    clock.advance(1);
    const refilled = buckets.take('acme|config', 5);
    expect(refilled).toMatchObject({ allowed: true, remaining: 0 });
    // Full again one minute after this request: five tokens at twelve seconds each.
    expect(refilled.resetAt).toBe(Math.ceil((clock.now() + 60_000) / 1000));
    expect(buckets.take('acme|config', 5).allowed).toBe(false);

    clock.advance(36_000);
    expect(buckets.take('acme|config', 5)).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('never holds more than the limit, and keeps each key apart', () => {
    const clock = manualClock();
    const buckets = createTokenBuckets(clock.now);
    buckets.take('acme|search', 100);
    clock.advance(10 * 60_000);
    expect(buckets.take('acme|search', 100).remaining).toBe(99);
    for (let i = 0; i < 2; i++) buckets.take('acme|config', 2);
    expect(buckets.take('acme|config', 2).allowed).toBe(false);
    expect(buckets.take('globex|config', 2).allowed).toBe(true);
  });

  it('applies a changed limit at once, keeping what is left up to the new size', () => {
    const clock = manualClock();
    const buckets = createTokenBuckets(clock.now);
    buckets.take('acme|connectors', 20);
    expect(buckets.take('acme|connectors', 2)).toMatchObject({ allowed: true, remaining: 1 });
    expect(buckets.take('acme|connectors', 2)).toMatchObject({ allowed: true, remaining: 0 });
    expect(buckets.take('acme|connectors', 2).allowed).toBe(false);
    // Raised again: it refills at the new rate, from what was left.
    clock.advance(30_000);
    expect(buckets.take('acme|connectors', 20)).toMatchObject({ allowed: true, remaining: 9 });
  });
});

describe('budgets', () => {
  const budgetOf = budgetUnder(() => DEFAULT_CLASS_LIMITS);

  it('gives an endpoint to which the REST API gives a limit of its own a budget of its own, every other route its class budget', () => {
    expect(budgetOf('search', 'POST /search')).toEqual({ name: 'search', perMinute: 100 });
    expect(budgetOf('search')).toEqual({ name: 'search', perMinute: 100 });
    expect(budgetOf('search', 'GET /search/suggestions')).toEqual({ name: 'GET /search/suggestions', perMinute: 50 });
    expect(budgetOf('config', 'GET /config')).toEqual({ name: 'config', perMinute: 5 });
    expect(budgetOf('config', 'PATCH /config')).toEqual({ name: 'PATCH /config', perMinute: 2 });
    expect(budgetOf('read')).toEqual({ name: 'read', perMinute: 600 });
  });

  it('scales with the class settings in force', () => {
    const scaled = budgetUnder(() => ({ ...DEFAULT_CLASS_LIMITS, search_per_minute: 4 }));
    expect(scaled('search', 'POST /search')).toEqual({ name: 'search', perMinute: 4 });
    expect(scaled('search', 'GET /search/suggestions')).toEqual({ name: 'GET /search/suggestions', perMinute: 2 });
  });
});
