import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/domain/events.js';
import { position } from '../../src/domain/position.js';
import type { Embedder } from '../../src/ports/embedder.js';
import { storedIngestion, storedJobRequest } from '../../test/support/events.js';
import { memoryChunkIndex } from '../../test/support/memoryChunkIndex.js';
import { EMBEDDING_PIECE, semanticIndexProjection } from './semanticIndex.js';
import { type CancelledWork } from '../../src/ports/searchIndex.js';

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const [first, second, third] = [id(1), id(2), id(3)];
const [cancelledJob, liveJob, nextJob] = [id(21), id(22), id(23)];
const TEXTS = new Map([
  ['h-alpha', 'alpha text'],
  ['h-bravo', 'bravo text'],
  ['h-charlie', 'charlie text'],
]);

/** Embeds each text as its length, and keeps every text it was given, in order. */
const recordingEmbedder = () => {
  const embedded: string[] = [];
  const embedder: Embedder = {
    model: 'length',
    dimensions: 1,
    embed: (texts) => {
      embedded.push(...texts);
      return Promise.resolve(texts.map((text) => Float32Array.of(text.length)));
    },
    close: () => Promise.resolve(),
  };
  return { embedder, embedded };
};

let at = 0;
const ingested = (documentId: string, hashes: string[], work: string, title: string | null = null): StoredEvent => {
  const event = storedIngestion({ documentId, hashes, position: position(1, ++at), project: 'p', ...(title ? { title } : {}) });
  return { ...event, metadata: { ...event.metadata, correlationId: work } };
};
const requested = (repoPath: string, jobId: string): StoredEvent =>
  storedJobRequest({ jobId, repoPath, position: position(1, ++at), project: 'p' });

/** Work cancelled now, each with the repository its chunks wait under. */
const cancelledAs = (cancelled: Map<string, string>): CancelledWork => (ids) =>
  Promise.resolve(new Map([...cancelled].filter(([work]) => ids.includes(work))));

const documentsIn = (map: Map<string, { chunk: { documentId: string } }>) =>
  [...new Set([...map.values()].map(({ chunk }) => chunk.documentId))].sort();

describe('the semantic index projection', () => {
  it('is the semantic index at version 1, which computes, with vectors of the embedder’s dimensions', () => {
    const { embedder } = recordingEmbedder();
    const projection = semanticIndexProjection(embedder, cancelledAs(new Map()));
    expect(projection).toMatchObject({ name: 'semantic', version: 1, computes: true, dimensions: 1 });
    expect(projection.eventTypes).toEqual(['DocumentIngested', 'DocumentRemoved', 'DocumentForgotten', 'IndexingJobRequested']);
    expect(semanticIndexProjection(embedder).eventTypes).toEqual(['DocumentIngested', 'DocumentRemoved', 'DocumentForgotten']);
  });

  it('embeds each chunk as its document’s title, then its text', async () => {
    const { embedder, embedded } = recordingEmbedder();
    const index = memoryChunkIndex(semanticIndexProjection(embedder), TEXTS);
    await index.apply([ingested(first, ['h-alpha'], liveJob, 'Guide'), ingested(second, ['h-bravo'], liveJob)]);
    expect(embedded).toEqual(['Guide\nalpha text', 'bravo text']);
    expect([...index.indexed.values()].map(({ value }) => [...value])).toEqual([[16], [10]]);
  });

  it('embeds nothing of a cancelled job and sets its chunks aside under its repository; other work is embedded', async () => {
    const { embedder, embedded } = recordingEmbedder();
    const index = memoryChunkIndex(semanticIndexProjection(embedder, cancelledAs(new Map([[cancelledJob, '/repo']]))), TEXTS);
    await index.apply([ingested(first, ['h-alpha'], cancelledJob), ingested(second, ['h-bravo'], liveJob)]);
    expect(embedded).toEqual(['bravo text']);
    expect(documentsIn(index.indexed)).toEqual([second]);
    expect([...index.setAside.values()].map(({ chunk, key }) => [chunk.documentId, key])).toEqual([[first, '/repo']]);
  });

  it('drops a set-aside chunk when its document is stored again by other work', async () => {
    const { embedder } = recordingEmbedder();
    const index = memoryChunkIndex(semanticIndexProjection(embedder, cancelledAs(new Map([[cancelledJob, '/repo']]))), TEXTS);
    await index.apply([ingested(first, ['h-alpha'], cancelledJob)]);
    await index.apply([ingested(first, ['h-charlie'], liveJob)]);
    expect(index.setAside.size).toBe(0);
    expect(documentsIn(index.indexed)).toEqual([first]);
  });

  it('keeps them aside when the job asking for the repository is cancelled itself, and embeds them when one is not', async () => {
    const { embedder, embedded } = recordingEmbedder();
    const cancelled = new Map([[cancelledJob, '/repo']]);
    const index = memoryChunkIndex(semanticIndexProjection(embedder, cancelledAs(cancelled)), TEXTS);
    await index.apply([ingested(first, ['h-alpha'], cancelledJob)]);
    cancelled.set(liveJob, '/repo');
    await index.apply([requested('/repo', liveJob)]);
    expect(embedded).toEqual([]);
    await index.apply([requested('/elsewhere', id(24)), requested('/repo', nextJob)]);
    expect(embedded).toEqual(['alpha text']);
    expect(documentsIn(index.indexed)).toEqual([first]);
    expect(index.setAside.size).toBe(0);
  });

  it('embeds at once a chunk of a cancelled job that a request later in the same batch brings back', async () => {
    const { embedder, embedded } = recordingEmbedder();
    const index = memoryChunkIndex(semanticIndexProjection(embedder, cancelledAs(new Map([[cancelledJob, '/repo']]))), TEXTS);
    await index.apply([ingested(third, ['h-charlie'], cancelledJob), requested('/repo', nextJob)]);
    expect(embedded).toEqual(['charlie text']);
    expect(index.setAside.size).toBe(0);
  });

  it(`asks again which work is cancelled every ${EMBEDDING_PIECE} chunks: a cancel stops a job's embedding within a piece`, async () => {
    const { embedder, embedded } = recordingEmbedder();
    const cancelled = new Map<string, string>();
    let asked = 0;
    const cancelledThenNow: CancelledWork = async (ids) => {
      // The job is cancelled while its first piece is being embedded.
      if (asked++ === 1) cancelled.set(cancelledJob, '/repo');
      return cancelledAs(cancelled)(ids);
    };
    const hashes = Array.from({ length: EMBEDDING_PIECE * 2 }, (_, i) => `h-${i}`);
    const texts = new Map(hashes.map((hash) => [hash, `text ${hash}`]));
    const index = memoryChunkIndex(semanticIndexProjection(embedder, cancelledThenNow), texts);
    await index.apply([ingested(first, hashes, cancelledJob)]);
    expect(embedded).toHaveLength(EMBEDDING_PIECE);
    expect(index.indexed.size).toBe(EMBEDDING_PIECE);
    expect(index.setAside.size).toBe(EMBEDDING_PIECE);
  });

  it('comes out the same when the same events are applied again', async () => {
    const events = [ingested(first, ['h-alpha'], cancelledJob), ingested(second, ['h-bravo'], liveJob), requested('/repo', nextJob)];
    const rule = cancelledAs(new Map([[cancelledJob, '/repo']]));
    const once = memoryChunkIndex(semanticIndexProjection(recordingEmbedder().embedder, rule), TEXTS);
    await once.apply(events);
    const twice = memoryChunkIndex(semanticIndexProjection(recordingEmbedder().embedder, rule), TEXTS);
    await twice.apply(events);
    await twice.apply(events);
    expect(twice.indexed).toEqual(once.indexed);
    expect(twice.setAside).toEqual(once.setAside);
  });
});
