import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTING, leaveOneOut, replay, SETTINGS_GRID, type QueryLists } from '../../eval/loo.js';

/** Per-query scores: `n` queries around `level`, alternating ± `jitter`. */
const scores = (level: number, n = 40, jitter = 0.05) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`q${i}`, level + (i % 2 ? jitter : -jitter)]));

describe('leave-one-corpus-out choice of fusion settings', () => {
  it('scores each corpus with the setting best on the others, and adopts a setting that wins everywhere', () => {
    const grid = {
      a: { default: scores(0.5), better: scores(0.6), narrow: scores(0.9) },
      b: { default: scores(0.5), better: scores(0.6), narrow: scores(0.3) },
      c: { default: scores(0.5), better: scores(0.6), narrow: scores(0.3) },
    };
    const loo = leaveOneOut(grid, 'default');
    expect(loo.rows.map((r) => [r.heldOut, r.chosen])).toEqual([
      ['a', 'better'],
      ['b', 'better'],
      ['c', 'better'],
    ]);
    expect(loo.rows[0]!.chosenScore).toBeCloseTo(0.6);
    expect(loo.rows[0]!.defaultScore).toBeCloseTo(0.5);
    expect(loo.candidate).toBe('better');
    expect(loo.adopt).toBe(true);
  });

  it('keeps the default when the best setting overall loses beyond noise on one corpus', () => {
    const grid = {
      a: { default: scores(0.5), tuned: scores(0.9) },
      b: { default: scores(0.5), tuned: scores(0.7) },
      c: { default: scores(0.5), tuned: scores(0.4) },
    };
    const loo = leaveOneOut(grid, 'default');
    expect(loo.candidate).toBe('tuned');
    expect(loo.versusDefault.c!.high).toBeLessThan(0);
    expect(loo.adopt).toBe(false);
    expect(loo.reason).toMatch(/loses more than noise on c/);
  });

  it('keeps the default when it is best', () => {
    const grid = { a: { default: scores(0.6), other: scores(0.5) }, b: { default: scores(0.6), other: scores(0.55) } };
    const loo = leaveOneOut(grid, 'default');
    expect(loo.adopt).toBe(false);
    expect(loo.reason).toMatch(/already best/);
  });

  it('replays fusion settings over recorded rankings', () => {
    // The rankings disagree on the first document, each as sure as the other: the prior decides.
    const lists: Record<string, QueryLists> = {
      q: {
        keyword: [
          { id: 'wrong', score: 10 },
          { id: 'right', score: 2 },
          { id: 'x', score: 1.9 },
          { id: 'y', score: 1.8 },
        ],
        semantic: [
          { id: 'right', score: 0.9 },
          { id: 'wrong', score: 0.5 },
          { id: 'x', score: 0.49 },
          { id: 'y', score: 0.48 },
        ],
        relevant: ['right'],
      },
    };
    const byName = (name: string) => SETTINGS_GRID.find((s) => s.name === name)!;
    expect(SETTINGS_GRID[0]).toBe(DEFAULT_SETTING);
    expect(new Set(SETTINGS_GRID.map((s) => s.name)).size).toBe(SETTINGS_GRID.length);
    expect(replay(lists, byName('adaptive p=0.8 [0.1,0.95]')).q).toBe(1);
    expect(replay(lists, byName('adaptive p=0.4 [0.3,0.9]')).q).toBeLessThan(1);
  });
});
