import { describe, expect, it } from 'vitest';
import { matchesAllFilter, type AllFilter, type FilterableEvent } from './eventStore.js';

const event: FilterableEvent = {
  streamId: 'doc-1',
  type: 'DocumentIngested',
  recordedAt: '2026-01-02T03:04:05.678Z',
  metadata: {
    project: 'acme',
    actor: { subject: 'ann', tenant: 'acme', via: 'rest' },
    commandId: 'c1',
    correlationId: 'k1',
  },
};

describe('what a filter of $all lets through', () => {
  it.each<[string, AllFilter | undefined, boolean]>([
    ['no filter', undefined, true],
    ['an empty filter', {}, true],
    ['its type', { eventTypes: ['DocumentIngested'] }, true],
    ['one of several types', { eventTypes: ['DocumentRemoved', 'DocumentIngested'] }, true],
    ['another type', { eventTypes: ['DocumentRemoved'] }, false],
    ['an empty list of types', { eventTypes: [] }, true],
    ['its category', { categories: ['doc'] }, true],
    ['another category', { categories: ['job'] }, false],
    ['its project', { project: 'acme' }, true],
    ['another project', { project: 'globex' }, false],
    ['its actor', { actor: 'ann' }, true],
    ['another actor', { actor: 'bob' }, false],
    ['its command', { commandId: 'c1' }, true],
    ['another command', { commandId: 'c2' }, false],
    ['its correlation', { correlationId: 'k1' }, true],
    ['another correlation', { correlationId: 'k2' }, false],
    ['since the millisecond it was recorded', { since: '2026-01-02T03:04:05.678Z' }, true],
    ['since a millisecond later', { since: '2026-01-02T03:04:05.679Z' }, false],
    ['until the millisecond it was recorded', { until: '2026-01-02T03:04:05.678Z' }, true],
    ['until a millisecond earlier', { until: '2026-01-02T03:04:05.677Z' }, false],
    ['since, in another offset', { since: '2026-01-02T04:04:05.678+01:00' }, true],
    [
      'every field matching',
      { eventTypes: ['DocumentIngested'], categories: ['doc'], project: 'acme', actor: 'ann' },
      true,
    ],
    [
      'every field but one matching',
      { eventTypes: ['DocumentIngested'], categories: ['doc'], project: 'acme', actor: 'bob' },
      false,
    ],
  ])('%s: %j → %s', (_name, filter, expected) => {
    expect(matchesAllFilter(event, filter)).toBe(expected);
  });

  it('lets no event without a project through a filter by project', () => {
    expect(matchesAllFilter({ ...event, metadata: {} }, { project: 'acme' })).toBe(false);
    expect(matchesAllFilter({ ...event, metadata: {} }, { actor: 'ann' })).toBe(false);
  });
});
