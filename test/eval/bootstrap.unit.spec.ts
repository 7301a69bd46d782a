import { describe, expect, it } from 'vitest';
import { paired, pairedBootstrap, seededRandom } from '../../eval/bootstrap.js';

describe('paired bootstrap over queries', () => {
  it('draws the same numbers from the same seed, and others from another', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, seededRandom(seed));
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
    expect(draw(7).every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('finds a consistent gain beyond noise', () => {
    const before = Array.from({ length: 100 }, (_, i) => (i % 10) / 10);
    const after = before.map((s, i) => s + 0.05 + (i % 3) * 0.01);
    const d = pairedBootstrap(before, after, { seed: 3 });
    expect(d.mean).toBeCloseTo(0.0599, 3);
    expect(d.low).toBeGreaterThan(0);
    expect(d.high).toBeGreaterThanOrEqual(d.mean);
    expect(d.withinNoise).toBe(false);
  });

  it('calls a difference that flips sign from query to query noise', () => {
    const before = Array.from({ length: 60 }, () => 0.5);
    const after = before.map((s, i) => (i % 2 === 0 ? s + 0.3 : s - 0.29));
    const d = pairedBootstrap(before, after, { seed: 1 });
    expect(d.low).toBeLessThan(0);
    expect(d.high).toBeGreaterThan(0);
    expect(d.withinNoise).toBe(true);
  });

  it('is reproducible for a seed, and refuses runs of different queries', () => {
    const a = [0.1, 0.4, 0.9, 0.3, 0.2];
    const b = [0.3, 0.4, 0.8, 0.6, 0.2];
    expect(pairedBootstrap(a, b, { seed: 5 })).toEqual(pairedBootstrap(a, b, { seed: 5 }));
    expect(() => pairedBootstrap(a, b.slice(1))).toThrow(/same queries/);
  });

  it('pairs two runs on the queries both scored, by id', () => {
    expect(paired({ q2: 0.2, q1: 0.1, q3: 0.3 }, { q1: 1, q2: 2, q4: 4 })).toEqual({ before: [0.1, 0.2], after: [1, 2] });
  });
});
