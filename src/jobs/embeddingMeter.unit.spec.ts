import { describe, expect, it } from 'vitest';
import { embeddingMeter } from './runIndexingJob.js';

describe('embeddingMeter', () => {
  it('counts the vectors made since it began, never goes back, and times the rest at the recent rate', () => {
    let made = 1_000;
    let now = 0;
    const meter = embeddingMeter(200, () => made, () => now);
    now = 1_000;
    made += 50;
    expect(meter.sample()).toBe(true);
    expect(meter.estimate(0)).toEqual({ fraction: 0.25, done: 50, etaSeconds: 3 });
    now = 2_000;
    // at work while it made vectors within the quiet time, however long one call takes
    expect(meter.sample()).toBe(true);
    now = 11_500;
    expect(meter.sample()).toBe(false);
    // a committed fraction below what was counted does not pull it back
    expect(meter.estimate(0.1).done).toBe(50);
    now = 12_000;
    made += 250;
    meter.sample();
    expect(meter.estimate(0.5).fraction).toBe(0.99);
    expect(meter.estimate(1)).toMatchObject({ fraction: 1, done: 200 });
  });

  it('gives no time left before any vector was made', () => {
    const meter = embeddingMeter(10, () => 0, () => 0);
    meter.sample();
    expect(meter.estimate(0)).toEqual({ fraction: 0, done: 0 });
  });
});
