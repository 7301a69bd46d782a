/** A seeded pseudo-random generator in [0, 1) (mulberry32): the same seed draws the same samples. */
export const seededRandom = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

export interface Difference {
  /** Mean of after − before over the queries. */
  mean: number;
  /** The 95% interval of that mean, from resampling queries. */
  low: number;
  high: number;
  /** Whether the interval holds zero: the difference is within the noise of this query set. */
  withinNoise: boolean;
}

/**
 * Paired bootstrap over queries: resamples the queries with replacement `resamples` times and
 * takes the 2.5th and 97.5th percentiles of the mean difference. `before` and `after` hold one
 * score per query, in the same order.
 */
export const pairedBootstrap = (
  before: readonly number[],
  after: readonly number[],
  { resamples = 1000, seed = 1 }: { resamples?: number; seed?: number } = {},
): Difference => {
  if (before.length !== after.length) throw new Error('paired runs must score the same queries');
  const n = before.length;
  const deltas = after.map((score, i) => score - before[i]!);
  const mean = deltas.reduce((a, b) => a + b, 0) / Math.max(1, n);
  if (n === 0) return { mean: 0, low: 0, high: 0, withinNoise: true };
  const random = seededRandom(seed);
  const means: number[] = [];
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += deltas[Math.floor(random() * n)]!;
    means.push(sum / n);
  }
  means.sort((a, b) => a - b);
  const low = means[Math.floor(0.025 * resamples)]!;
  const high = means[Math.min(resamples - 1, Math.ceil(0.975 * resamples) - 1)]!;
  return { mean, low, high, withinNoise: low <= 0 && high >= 0 };
};

/** Scores of two runs on the queries both scored, in one order. */
export const paired = (
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
): { before: number[]; after: number[] } => {
  const ids = Object.keys(before)
    .filter((id) => id in after)
    .sort();
  return { before: ids.map((id) => before[id]!), after: ids.map((id) => after[id]!) };
};
