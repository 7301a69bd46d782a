import { describe, expect, it } from 'vitest';
import type { StoredEvent } from './events.js';
import { position } from './position.js';
import { foldUntil, parseAsOf, type Fold } from './asOf.js';

/** Events of one stream: revision n at position (1, n + 1), recorded n seconds after midnight. */
const events = (count: number): StoredEvent[] =>
  Array.from({ length: count }, (_, n) => ({
    type: 'IndexingJobStarted',
    schemaVersion: 1,
    data: { jobId: `job-${n}`, runnerId: 'r' },
    streamId: 'job-x',
    revision: BigInt(n),
    position: position(1, n + 1),
    recordedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    metadata: {} as StoredEvent['metadata'],
  }));

const revisions: Fold<number[]> = { initialState: () => [], evolve: (seen, event) => [...seen, Number(event.revision)] };

describe('foldUntil', () => {
  it('folds every event without a moment', () => {
    expect(foldUntil(events(3), revisions)).toEqual({ state: [0, 1, 2], revision: 2n, next: 3 });
  });

  it('stops at the last event at or before a position, or a time', () => {
    expect(foldUntil(events(4), revisions, parseAsOf(position(1, 2)))).toEqual({ state: [0, 1], revision: 1n, next: 2 });
    expect(foldUntil(events(4), revisions, parseAsOf('2026-01-01T00:00:02.500Z')).state).toEqual([0, 1, 2]);
  });

  it('folds a prefix: an event after the moment ends the fold even if a later one sorts before it', () => {
    const [first, second, third] = events(3);
    const outOfOrder = [first!, { ...second!, position: position(9, 9) }, third!];
    expect(foldUntil(outOfOrder, revisions, parseAsOf(position(1, 5))).state).toEqual([0]);
  });

  it('knows nothing before the first event', () => {
    expect(foldUntil(events(2), revisions, parseAsOf('2025-12-31T23:59:59Z'))).toEqual({ state: [], revision: null, next: 0 });
  });

  it('goes on from an earlier fold of the same events', () => {
    const all = events(4);
    const early = foldUntil(all, revisions, parseAsOf(position(1, 1)));
    expect(foldUntil(all, revisions, undefined, early)).toEqual({ state: [0, 1, 2, 3], revision: 3n, next: 4 });
  });
});
