import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/domain/events.js';
import { position, type Position } from '../../src/domain/position.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import { CheckpointMovedError, type RunnableProjection } from '../../src/ports/projections.js';
import type { KeywordIndex, SearchFilters } from '../../src/ports/searchIndex.js';
import { chunkIdsOf, storedIngestion, testMetadata } from '../support/events.js';

export interface KeywordIndexFixture {
  index: KeywordIndex;
  projection: RunnableProjection;
  content: ContentStore;
  cleanup(): Promise<void>;
}

interface TestDocument {
  documentId?: string;
  project: string;
  source?: string;
  title?: string;
  tags?: string[];
  updatedAt?: string;
  chunks: string[];
}

/** The keyword index contract: every adapter of the `KeywordIndex` port, fed by its projection, must pass it. */
export const describeKeywordIndexContract = (
  name: string,
  factory: () => Promise<KeywordIndexFixture>,
): void => {
  describe(`KeywordIndex contract: ${name}`, () => {
    let fixture: KeywordIndexFixture;
    let sequence = 0n;

    beforeAll(async () => {
      fixture = await factory();
    });
    afterAll(async () => {
      await fixture?.cleanup();
    });

    const nextPosition = (): Position => position(1, (sequence += 1n));

    const ingested = async (doc: TestDocument): Promise<{ event: StoredEvent; chunkIds: string[] }> => {
      const event = storedIngestion({
        ...doc,
        documentId: doc.documentId ?? randomUUID(),
        hashes: await fixture.content.put(doc.chunks),
        position: nextPosition(),
      });
      return { event, chunkIds: chunkIdsOf(event) };
    };

    const removed = (documentId: string, project: string): StoredEvent => ({
      type: 'DocumentRemoved',
      schemaVersion: 1,
      data: { documentId, reason: null },
      streamId: `doc-${documentId}`,
      revision: 1n,
      position: nextPosition(),
      metadata: testMetadata({ project }),
      recordedAt: new Date().toISOString(),
    });

    const apply = async (events: StoredEvent[]) => {
      const sink = fixture.projection.live;
      await sink.apply(events, await sink.checkpoint(), events.at(-1)!.position);
    };

    const chunkIdsFor = async (query: string, filters: SearchFilters, limit = 10) =>
      (await fixture.index.search(query, filters, limit)).map((hit) => hit.chunkId);

    // First, while the index holds a single chunk: a planner may then prefer scanning the table.
    it('finds only the chunks a query matches, and scores them, however few chunks there are', async () => {
      const project = `p-${randomUUID()}`;
      const only = await ingested({ project, chunks: ['Cobalt harbours shelter the fishing fleet'] });
      await apply([only.event]);
      const [hit] = await fixture.index.search('cobalt harbours', { project }, 10);
      expect(hit).toMatchObject({ chunkId: only.chunkIds[0] });
      expect(await fixture.index.search('zebra quartermaster', { project }, 10)).toEqual([]);
      const [weaker] = await fixture.index.search('fleet', { project }, 10);
      expect(weaker!.score).toBeGreaterThan(0);
      expect(weaker!.score).not.toBe(hit!.score);
    });

    it('ranks the chunks that match the query, best first, with positive scores', async () => {
      const project = `p-${randomUUID()}`;
      const strong = await ingested({
        project,
        chunks: ['Kafka consumer lag alerts: consumer lag grows when consumers stall'],
      });
      const weak = await ingested({ project, chunks: ['A note on lag in general'] });
      const other = await ingested({ project, chunks: ['Billing invoices are sent monthly'] });
      await apply([strong.event, weak.event, other.event]);

      const hits = await fixture.index.search('consumer lag', { project }, 10);
      expect(hits[0]?.chunkId).toBe(strong.chunkIds[0]);
      expect(hits.map((h) => h.chunkId)).not.toContain(other.chunkIds[0]);
      expect(hits.every((h) => h.score > 0)).toBe(true);
      expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
      expect(hits[0]?.documentId).toBe((strong.event.data as { documentId: string }).documentId);
      expect(await chunkIdsFor('zzqxvw', { project })).toEqual([]);
    });

    it('finds code by the words inside its identifiers, and by the whole identifier', async () => {
      const project = `p-${randomUUID()}`;
      const code = await ingested({
        project,
        chunks: ['export function getUserById(userId) {\n  return accounts.lookupTable.fetch(userId);\n}'],
      });
      const prose = await ingested({ project, chunks: ['A user guide to getting started'] });
      await apply([code.event, prose.event]);
      expect((await chunkIdsFor('get user by id', { project }))[0]).toBe(code.chunkIds[0]);
      expect((await chunkIdsFor('getUserById', { project }))[0]).toBe(code.chunkIds[0]);
      expect(await chunkIdsFor('lookup table', { project })).toEqual(code.chunkIds);
    });

    it('scores a hit the same whether or not a filter narrows the ranking', async () => {
      const project = `p-${randomUUID()}`;
      const docs = await Promise.all(
        ['lag lag lag consumer', 'consumer lag', 'lag', 'consumer offsets', 'billing'].map((text, i) =>
          ingested({ project, source: i % 2 ? 'odd' : 'even', chunks: [text] }),
        ),
      );
      await apply(docs.map((d) => d.event));
      const all = await fixture.index.search('consumer lag', { project }, 10);
      const even = await fixture.index.search('consumer lag', { project, source: 'even' }, 10);
      const evenIds = new Set([docs[0], docs[2], docs[4]].flatMap((d) => d!.chunkIds));
      expect(all.length).toBe(4);
      expect(even.length).toBe(2);
      expect(even).toEqual(all.filter((hit) => evenIds.has(hit.chunkId)));
    });

    it('counts, per source, the documents holding any word of the query, within the filters', async () => {
      const project = `p-${randomUUID()}`;
      const docs = await Promise.all([
        ingested({ project, source: 'wiki', chunks: ['rotation of signing keys', 'keys are rotated monthly'] }),
        ingested({ project, source: 'wiki', chunks: ['certificate rotation'] }),
        ingested({ project, source: 'git', chunks: ['rotate the keys with ctx keys rotate'] }),
        ingested({ project, source: 'git', chunks: ['nothing to see here'] }),
        ingested({ project: `${project}-elsewhere`, source: 'wiki', chunks: ['signing keys elsewhere'] }),
      ]);
      await apply(docs.map((d) => d.event));
      const idOf = (i: number) => (docs[i]!.event.data as { documentId: string }).documentId;
      expect('countDocuments' in fixture.index, 'a keyword index counts its matches').toBe(true);
      const count = (query: string, filters: SearchFilters, among: string[]) =>
        fixture.index.countDocuments!(query, filters, among);

      const all = await count('signing keys', { project }, [idOf(1), idOf(2), idOf(3)]);
      expect(Object.fromEntries(all.bySource)).toEqual({ wiki: 1, git: 1 });
      expect([...all.among]).toEqual([idOf(2)]);
      const anyWord = await count('certificate keys', { project }, []);
      expect(Object.fromEntries(anyWord.bySource)).toEqual({ wiki: 2, git: 1 });
      const narrowed = await count('certificate keys', { project, source: 'git' }, []);
      expect(Object.fromEntries(narrowed.bySource)).toEqual({ git: 1 });
    });

    it('applies project, source, every tag and the update-time range as filters', async () => {
      const project = `p-${randomUUID()}`;
      const docs = await Promise.all([
        ingested({
          project,
          source: 'git:platform',
          tags: ['ops', 'kafka'],
          updatedAt: '2026-03-01T00:00:00Z',
          chunks: ['retention policy for topics'],
        }),
        ingested({
          project,
          source: 'filesystem',
          tags: ['ops'],
          updatedAt: '2026-05-01T00:00:00Z',
          chunks: ['retention policy for backups'],
        }),
        ingested({ project: `${project}-elsewhere`, tags: ['ops'], chunks: ['retention policy elsewhere'] }),
      ]);
      await apply(docs.map((d) => d.event));
      const [topics, backups] = docs.map((d) => d.chunkIds[0]!);

      expect((await chunkIdsFor('retention policy', { project })).sort()).toEqual([topics, backups].sort());
      expect(await chunkIdsFor('retention policy', { project, source: 'git:platform' })).toEqual([topics]);
      expect(await chunkIdsFor('retention policy', { project, tags: ['ops', 'kafka'] })).toEqual([topics]);
      expect(await chunkIdsFor('retention policy', { project, tags: ['missing'] })).toEqual([]);
      expect(await chunkIdsFor('retention policy', { project, since: '2026-04-01T00:00:00Z' })).toEqual([
        backups,
      ]);
      expect(await chunkIdsFor('retention policy', { project, until: '2026-04-01T00:00:00Z' })).toEqual([
        topics,
      ]);
      expect(
        await chunkIdsFor('retention policy', {
          project,
          since: '2026-03-01T00:00:00Z',
          until: '2026-03-01T00:00:00Z',
        }),
      ).toEqual([topics]);
    });

    it('treats quotes and backslashes in filter values as plain characters', async () => {
      const victim = `x-${randomUUID()}`;
      const project = `p-"${randomUUID()}\\" OR project = "${victim}`;
      const doc = await ingested({ project, source: 'a"b\\c', chunks: ['escaping is tested here'] });
      const neighbour = await ingested({ project: victim, chunks: ['escaping is tested here too'] });
      await apply([doc.event, neighbour.event]);
      expect(await chunkIdsFor('escaping tested', { project, source: 'a"b\\c' })).toEqual(doc.chunkIds);
      expect(await chunkIdsFor('escaping tested', { project, source: 'a"b' })).toEqual([]);
    });

    it('replaces all of a document’s chunks when it is ingested again, and drops them when it is removed', async () => {
      const project = `p-${randomUUID()}`;
      const documentId = randomUUID();
      const first = await ingested({
        project,
        documentId,
        chunks: ['alpha deployment guide', 'alpha rollback steps', 'alpha on-call'],
      });
      await apply([first.event]);
      expect(await chunkIdsFor('alpha', { project })).toHaveLength(3);

      const second = await ingested({ project, documentId, chunks: ['beta deployment guide'] });
      await apply([second.event]);
      expect(await chunkIdsFor('alpha', { project })).toEqual([]);
      expect(await chunkIdsFor('deployment', { project })).toEqual(second.chunkIds);

      await apply([removed(documentId, project)]);
      expect(await chunkIdsFor('deployment', { project })).toEqual([]);
    });

    it('keeps only the last change of a document within one batch', async () => {
      const project = `p-${randomUUID()}`;
      const documentId = randomUUID();
      const first = await ingested({ project, documentId, chunks: ['gamma first version'] });
      const second = await ingested({ project, documentId, chunks: ['gamma second version'] });
      const gone = await ingested({ project, chunks: ['gamma short-lived'] });
      const goneId = (gone.event.data as { documentId: string }).documentId;
      await apply([first.event, gone.event, second.event, removed(goneId, project)]);
      expect(await chunkIdsFor('gamma', { project })).toEqual(second.chunkIds);
    });

    it('gives the same answers when a batch is applied again', async () => {
      const project = `p-${randomUUID()}`;
      const doc = await ingested({ project, chunks: ['delta replay safety'] });
      await apply([doc.event]);
      const before = await chunkIdsFor('delta replay', { project });
      await apply([{ ...doc.event, position: nextPosition() }]);
      expect(await chunkIdsFor('delta replay', { project })).toEqual(before);
      expect(before).toEqual(doc.chunkIds);
    });

    it('refuses a batch whose starting checkpoint has moved, and moves the checkpoint with each batch', async () => {
      const sink = fixture.projection.live;
      const project = `p-${randomUUID()}`;
      const doc = await ingested({ project, chunks: ['epsilon checkpoint'] });
      const stale = position(0, 1);
      await expect(sink.apply([doc.event], stale, doc.event.position)).rejects.toBeInstanceOf(
        CheckpointMovedError,
      );
      await apply([doc.event]);
      expect(await sink.checkpoint()).toBe(doc.event.position);
    });

    it('rebuilds into a shadow while the live index keeps answering, then swaps it in', async () => {
      const project = `p-${randomUUID()}`;
      const old = await ingested({ project, chunks: ['zeta live version'] });
      await apply([old.event]);

      const shadow = await fixture.projection.openShadow();
      const rebuilt = await ingested({ project, chunks: ['zeta rebuilt version'] });
      await shadow.apply([rebuilt.event], await shadow.checkpoint(), rebuilt.event.position);
      expect(await chunkIdsFor('zeta', { project })).toEqual(old.chunkIds);

      await shadow.promote();
      expect(await chunkIdsFor('zeta', { project })).toEqual(rebuilt.chunkIds);
      expect(await fixture.projection.live.checkpoint()).toBe(rebuilt.event.position);
      expect(await fixture.projection.liveVersion()).toBe(fixture.projection.version);
    });
  });
};
