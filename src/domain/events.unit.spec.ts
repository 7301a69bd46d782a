import { describe, expect, it } from 'vitest';
import { parseStoredEvent, validateEvent, type Upcasters } from './events.js';

const documentId = '6f1c2a34-5b6d-4e7f-8a9b-0c1d2e3f4a5b';

describe('event catalog', () => {
  it('lifts an old payload through each upcaster to the current version', () => {
    // A past DocumentRemoved had no reason; versions 0 → 1 add it.
    const upcasters: Upcasters = { DocumentRemoved: { 0: (data) => ({ ...data, reason: null }) } };
    const event = parseStoredEvent('DocumentRemoved', 0, { documentId }, upcasters);
    expect(event).toEqual({ type: 'DocumentRemoved', schemaVersion: 1, data: { documentId, reason: null } });
  });

  it('refuses a version it cannot lift and a type it does not know', () => {
    expect(() => parseStoredEvent('DocumentRemoved', 0, { documentId })).toThrow(/No upcaster for DocumentRemoved v0/);
    expect(() => parseStoredEvent('Teleported', 1, {})).toThrow(/Unknown event type 'Teleported'/);
  });

  it('validates events against the catalog, naming the bad field', () => {
    expect(() =>
      validateEvent({ type: 'DocumentRemoved', schemaVersion: 1, data: { documentId: 'nope', reason: null } }),
    ).toThrow(/data\.documentId/);
  });
});
