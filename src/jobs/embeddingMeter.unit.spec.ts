import { describe, expect, it } from 'vitest';
import { embeddingMeter } from './runIndexingJob.js';

describe('embeddingMeter', () => {
  it('counts the vectors made since it began, never goes back, and times the rest at the rate between calls', () => {
    let made = 1_000;
    let now = 0;
    const meter = embeddingMeter(() => made, () => now);
    now = 5_000;
    made += 25;
    expect(meter.sample()).toBe(true);
    // one call back: no rate yet, the time before it may not have been embedding time
    expect(meter.estimate(200, 0)).toEqual({ fraction: 0.125, done: 25 });
    now = 6_000;
    made += 25;
    meter.sample();
    expect(meter.made()).toBe(50);
    expect(meter.estimate(200, 0)).toEqual({ fraction: 0.25, done: 50, etaSeconds: 6 });
    now = 7_000;
    // at work while it made vectors within the quiet time, however long one call takes
    expect(meter.sample()).toBe(true);
    now = 16_500;
    expect(meter.sample()).toBe(false);
    // a committed fraction below what was counted does not pull it back; the rate is the calls', not lowered by the wait for the next
    expect(meter.estimate(200, 0.1)).toEqual({ fraction: 0.25, done: 50, etaSeconds: 6 });
    now = 17_000;
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
    expect(meter.perSecond()).toBe(20);
    expect(meter.secondsFor(2_000)).toBe(100);
  });

  it('measures over calls to the model that take longer than the window', () => {
    let made = 0;
    let now = 0;
    const meter = embeddingMeter(() => made, () => now);
    for (const [at, count] of [[40_000, 4], [100_000, 132], [150_000, 260], [160_000, 260]] as const) {
      now = at;
      made = count;
      meter.sample();
    }
    // the last call: 128 in 50 s, not the 4 of the first over the time before it, nor the wait since the last
    expect(meter.secondsFor(256)).toBe(100);
  });
});
