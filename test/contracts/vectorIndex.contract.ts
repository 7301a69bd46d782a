import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/domain/events.js';
import { position, type Position } from '../../src/domain/position.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import type { Embedder } from '../../src/ports/embedder.js';
import type { ProjectionSink } from '../../src/ports/projections.js';
import type { SearchFilters, VectorFeedback, VectorIndex } from '../../src/ports/searchIndex.js';
import { storedIngestion } from '../support/events.js';

export interface VectorIndexFixture {
  index: VectorIndex;
  /** The sink its projection writes the chunk vectors through. */
  sink: ProjectionSink;
  content: ContentStore;
  /** Makes what the sink was given searchable, when the adapter needs a last step (a bulk index build). */
  seal?(): Promise<void>;
  cleanup(): Promise<void>;
}

const DIMENSIONS = 16;

/** Each word on its own axis (by hash): texts sharing words point the same way; deterministic, L2-normalised. */
export const wordAxesEmbedder: Embedder = {
  model: 'word-axes-16d',
  dimensions: DIMENSIONS,
  embed: (texts) =>
    Promise.resolve(
      texts.map((text) => {
        const vector = new Float32Array(DIMENSIONS).fill(0.01);
        for (const word of text.toLowerCase().match(/[a-z]+/g) ?? [])
          vector[[...word].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % DIMENSIONS, 7)]! += 1;
        const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
        return vector.map((x) => x / norm);
      }),
    ),
  close: () => Promise.resolve(),
};

interface TestDocument {
  project: string;
  source?: string;
  tags?: string[];
  updatedAt?: string;
  text: string;
}

/** The vector index contract: every adapter of the `VectorIndex` port, fed by its projection, must pass it. */
export const describeVectorIndexContract = (name: string, factory: () => Promise<VectorIndexFixture>): void => {
  describe(`VectorIndex contract: ${name}`, () => {
    let fixture: VectorIndexFixture;
    let sequence = 0n;
    const nextPosition = (): Position => position(1, (sequence += 1n));
    /** Documents are declared while the suite is collected and ingested at once, before the first test. */
    const documents: (TestDocument & { documentId: string; chunkId: string })[] = [];
    const declared = (doc: TestDocument) => {
      const made = { ...doc, documentId: randomUUID(), chunkId: randomUUID() };
      documents.push(made);
      return made;
    };

    const ingestedEvent = (doc: (typeof documents)[number], hash: string): StoredEvent =>
      storedIngestion({ ...doc, hashes: [hash], chunkIds: [doc.chunkId], position: nextPosition() });

    beforeAll(async () => {
      fixture = await factory();
      const hashes = await fixture.content.put(documents.map((d) => d.text));
      const events = documents.map((doc, i) => ingestedEvent(doc, hashes[i]!));
      await fixture.sink.apply(events, await fixture.sink.checkpoint(), events.at(-1)!.position);
      await fixture.seal?.();
    }, 120_000);
    afterAll(async () => {
      await fixture?.cleanup();
    });

    const query = async (text: string) => (await wordAxesEmbedder.embed([text], 'query'))[0]!;
    const chunkIdsFor = async (text: string, filters: SearchFilters, limit = 10) =>
      (await fixture.index.search(await query(text), filters, limit)).map((hit) => hit.chunkId);

    const ranked = `p-${randomUUID()}`;
    const nearest = declared({ project: ranked, text: 'harbour harbour harbour fleet' });
    const middle = declared({ project: ranked, text: 'harbour invoice' });
    const far = declared({ project: ranked, text: 'invoice billing monthly' });

    it('answers the nearest chunks first, higher scores better, their documents named, at most limit', async () => {
      const hits = await fixture.index.search(await query('harbour'), { project: ranked }, 10);
      expect(hits.map((h) => h.chunkId)).toEqual([nearest.chunkId, middle.chunkId, far.chunkId]);
      expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
      expect(hits[0]!.score).toBeGreaterThan(0.9);
      expect(hits[0]!.documentId).toBe(nearest.documentId);
      expect(await chunkIdsFor('harbour', { project: ranked }, 2)).toEqual([nearest.chunkId, middle.chunkId]);
    });

    it('ranks candidates again by the query moved toward feedback chunks, by their weight', async () => {
      const harbour = await query('harbour');
      const candidates = [far.chunkId, nearest.chunkId, middle.chunkId];
      const rerank = async (feedback: VectorFeedback, among = candidates) =>
        (await fixture.index.rerank(harbour, among, feedback)).map((hit) => hit.chunkId);
      // harbour + 1 × (invoice billing monthly): the chunk with both words comes first.
      expect(await rerank({ chunkIds: [far.chunkId], weight: 1 })).toEqual([middle.chunkId, far.chunkId, nearest.chunkId]);
      expect(await rerank({ chunkIds: [far.chunkId], weight: 0.1 })).toEqual([nearest.chunkId, middle.chunkId, far.chunkId]);
      // Only the candidates; feedback chunks the index does not hold leave the query as it is.
      expect(await rerank({ chunkIds: [far.chunkId], weight: 1 }, [nearest.chunkId, far.chunkId])).toEqual([far.chunkId, nearest.chunkId]);
      const plain = await fixture.index.rerank(harbour, candidates, { chunkIds: [randomUUID()], weight: 1 });
      const searched = await fixture.index.search(harbour, { project: ranked }, 10);
      expect(plain.map((hit) => hit.chunkId)).toEqual(searched.map((hit) => hit.chunkId));
      plain.forEach((hit, i) => expect(hit.score).toBeCloseTo(searched[i]!.score, 5));
      expect(plain[0]!.documentId).toBe(nearest.documentId);
    });

    const filtered = `p-${randomUUID()}`;
    const topics = declared({ project: filtered, source: 'git:platform', tags: ['ops', 'kafka'], updatedAt: '2026-03-01T00:00:00Z', text: 'retention policy topics' });
    const backups = declared({ project: filtered, source: 'filesystem', tags: ['ops'], updatedAt: '2026-05-01T00:00:00Z', text: 'retention policy backups' });
    declared({ project: `${filtered}-elsewhere`, tags: ['ops'], text: 'retention policy elsewhere' });

    it('applies project, source, every tag and the update-time range as filters', async () => {
      const ids = (filters: Omit<SearchFilters, 'project'>) => chunkIdsFor('retention policy', { project: filtered, ...filters });
      expect((await ids({})).sort()).toEqual([topics.chunkId, backups.chunkId].sort());
      expect(await ids({ source: 'git:platform' })).toEqual([topics.chunkId]);
      expect(await ids({ tags: ['ops', 'kafka'] })).toEqual([topics.chunkId]);
      expect(await ids({ tags: ['missing'] })).toEqual([]);
      expect(await ids({ since: '2026-04-01T00:00:00Z' })).toEqual([backups.chunkId]);
      expect(await ids({ until: '2026-04-01T00:00:00Z' })).toEqual([topics.chunkId]);
    });
  });
};
