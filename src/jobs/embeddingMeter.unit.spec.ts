import { describe, expect, it } from 'vitest';
import { embeddingMeter } from './runIndexingJob.js';

describe('embeddingMeter', () => {
  it('counts the vectors made since it began, never goes back, and times the rest at the recent rate', () => {
    let made = 1_000;
    let now = 0;
    const meter = embeddingMeter(() => made, () => now);
    now = 1_000;
    made += 50;
    expect(meter.sample()).toBe(true);
    expect(meter.made()).toBe(50);
    expect(meter.estimate(200, 0)).toEqual({ fraction: 0.25, done: 50, etaSeconds: 3 });
    now = 2_000;
    // at work while it made vectors within the quiet time, however long one call takes
    expect(meter.sample()).toBe(true);
    now = 11_500;
    expect(meter.sample()).toBe(false);
    // a committed fraction below what was counted does not pull it back
    expect(meter.estimate(200, 0.1).done).toBe(50);
    now = 12_000;
    made += 250;
    meter.sample();
    expect(meter.estimate(200, 0.5).fraction).toBe(0.99);
    expect(meter.estimate(200, 1)).toMatchObject({ fraction: 1, done: 200 });
  });

  it('gives no time left before any vector was made', () => {
    const meter = embeddingMeter(() => 0, () => 0);
    meter.sample();
    expect(meter.estimate(10, 0)).toEqual({ fraction: 0, done: 0 });
    expect(meter.secondsFor(10)).toBeUndefined();
  });

  it('times the chunks left at the rate of the last half minute, not since it began', () => {
    let made = 0;
    let now = 0;
    const meter = embeddingMeter(() => made, () => now);
    // a slow start: 10 vectors in the first minute, then 20 a second
    now = 60_000;
    made = 10;
    meter.sample();
    for (let second = 61; second <= 100; second++) {
      now = second * 1_000;
      made += 20;
      meter.sample();
    }
    expect(meter.secondsFor(2_000)).toBe(100);
  });

  it('measures back to before the last vectors came when a call to the model takes longer than the window', () => {
    let made = 0;
    let now = 0;
    const meter = embeddingMeter(() => made, () => now);
    for (const [at, count] of [[40_000, 128], [60_000, 128], [75_000, 128]] as const) {
      now = at;
      made = count;
      meter.sample();
    }
    // 128 in 75 s, though none came in the last half minute
    expect(meter.secondsFor(128)).toBe(75);
  });
});
