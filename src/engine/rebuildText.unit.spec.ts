import { describe, expect, it } from 'vitest';
import { START } from '../domain/position.js';
import type { RebuildProgress } from './projectionRunner.js';
import { formatDuration, formatRebuildProgress } from './rebuildText.js';

const progress = (overrides: Partial<RebuildProgress>): RebuildProgress => ({
  processedEvents: 0,
  totalEvents: 0,
  percent: 0,
  etaSeconds: null,
  checkpoint: START,
  head: START,
  startedAt: '2026-01-01T00:00:00.000Z',
  ...overrides,
});

describe('CLI formatting of rebuilds', () => {
  it('says durations in the largest units that fit', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(59.4)).toBe('59s');
    expect(formatDuration(185)).toBe('3m 05s');
    expect(formatDuration(7620)).toBe('2h 07m');
  });

  it('shows events done of the total, the percentage and the time left', () => {
    expect(formatRebuildProgress(progress({ processedEvents: 1200, totalEvents: 5000, percent: 24, etaSeconds: 12 }))).toBe(
      '1200/5000 events (24.0%), 12s left',
    );
    expect(formatRebuildProgress(progress({ totalEvents: 5000 }))).toBe('0/5000 events (0.0%), estimating');
  });
});
