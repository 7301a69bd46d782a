import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/domain/events.js';
import { position } from '../../src/domain/position.js';
import { storedIngestion, testMetadata } from '../../test/support/events.js';
import { memoryChunkIndex } from '../../test/support/memoryChunkIndex.js';
import { keywordIndexProjection } from './keywordIndex.js';

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const [first, second] = [id(1), id(2)];
const TEXTS = new Map([
  ['h-alpha', 'alpha text'],
  ['h-bravo', 'bravo text'],
  ['h-charlie', 'charlie text'],
]);

let at = 0;
const ingested = (documentId: string, hashes: string[], chunkIds?: string[]) =>
  storedIngestion({ documentId, hashes, chunkIds, position: position(1, ++at), title: 'Guide' });
const gone = (type: 'DocumentRemoved' | 'DocumentForgotten', documentId: string): StoredEvent =>
  ({
    type,
    schemaVersion: 1,
    data: type === 'DocumentRemoved' ? { documentId, reason: null } : { documentId, reason: null, versions: 1 },
    streamId: `doc-${documentId}`,
    revision: 1n,
    position: position(1, ++at),
    metadata: testMetadata(),
    recordedAt: '2026-01-02T03:04:05.000Z',
  }) as StoredEvent;

/** The index as document id → its chunks' texts, in chunk order. */
const held = (index: ReturnType<typeof memoryChunkIndex<string>>) => {
  const byDocument = new Map<string, string[]>();
  for (const { chunk, value } of [...index.indexed.values()].sort((a, b) => a.chunk.chunkIndex - b.chunk.chunkIndex))
    byDocument.set(chunk.documentId, [...(byDocument.get(chunk.documentId) ?? []), value]);
  return byDocument;
};

describe('the keyword index projection', () => {
  it('is the keyword index at version 4, fed by document events only', () => {
    expect(keywordIndexProjection).toMatchObject({ name: 'keyword', version: 4 });
    expect(keywordIndexProjection.eventTypes).toEqual(['DocumentIngested', 'DocumentRemoved', 'DocumentForgotten']);
    expect('resumes' in keywordIndexProjection).toBe(false);
  });

  it('holds every chunk of an ingested document with its text and the document’s title, filters and tags', async () => {
    const index = memoryChunkIndex(keywordIndexProjection, TEXTS);
    const event = ingested(first, ['h-alpha', 'h-bravo']);
    await index.apply([event]);
    expect(held(index)).toEqual(new Map([[first, ['alpha text', 'bravo text']]]));
    expect([...index.indexed.values()][0]!.chunk).toMatchObject({
      documentId: first,
      project: 'test',
      source: 'filesystem',
      title: 'Guide',
      chunkIndex: 0,
    });
  });

  it('replaces all of a document’s chunks when it is ingested again: only the last change of a batch counts', async () => {
    const index = memoryChunkIndex(keywordIndexProjection, TEXTS);
    await index.apply([ingested(first, ['h-alpha', 'h-bravo'])]);
    await index.apply([ingested(first, ['h-bravo']), ingested(first, ['h-charlie']), ingested(second, ['h-alpha'])]);
    expect(held(index)).toEqual(
      new Map([
        [first, ['charlie text']],
        [second, ['alpha text']],
      ]),
    );
  });

  it.each(['DocumentRemoved', 'DocumentForgotten'] as const)('drops every chunk of a document on %s', async (type) => {
    const index = memoryChunkIndex(keywordIndexProjection, TEXTS);
    await index.apply([ingested(first, ['h-alpha']), ingested(second, ['h-bravo'])]);
    await index.apply([gone(type, first)]);
    expect(held(index)).toEqual(new Map([[second, ['bravo text']]]));
  });

  it('sets nothing aside, whatever the work that stored a chunk', async () => {
    const index = memoryChunkIndex(keywordIndexProjection, TEXTS);
    await index.apply([ingested(first, ['h-alpha'])]);
    expect(index.setAside.size).toBe(0);
  });

  it('comes out the same when the same events are applied again', async () => {
    const events = [ingested(first, ['h-alpha', 'h-bravo'], [id(11), id(12)]), gone('DocumentRemoved', second), ingested(second, ['h-charlie'], [id(13)])];
    const once = memoryChunkIndex(keywordIndexProjection, TEXTS);
    await once.apply(events);
    const twice = memoryChunkIndex(keywordIndexProjection, TEXTS);
    await twice.apply(events);
    await twice.apply(events);
    expect(twice.indexed).toEqual(once.indexed);
  });
});
