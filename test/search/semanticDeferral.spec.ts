import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type Database } from '../../infra/postgres/database.js';
import { createPostgresContentStore } from '../../infra/postgres/postgresContentStore.js';
import { createPgvectorIndex } from '../../infra/search/pgvectorIndex.js';
import { semanticIndexProjection } from '../../projections/search/semanticIndex.js';
import { type CancelledWork } from '../../src/ports/searchIndex.js';
import type { StoredEvent } from '../../src/domain/events.js';
import { position, START, type Position } from '../../src/domain/position.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import type { Embedder } from '../../src/ports/embedder.js';
import type { RunnableProjection } from '../../src/ports/projections.js';
import { storedIngestion, storedJobRequest, testMetadata } from '../support/events.js';
import { wordAxesEmbedder } from '../contracts/vectorIndex.contract.js';

/** The rules of the semantic index's deferral, on its real tables: which chunks wait unembedded, and what brings them back. */
describe('semantic index: chunks of cancelled work', () => {
  let db: Database;
  let content: ContentStore;
  let projection: RunnableProjection;
  const embedded: string[] = [];
  const embedder: Embedder = {
    ...wordAxesEmbedder,
    embed: (texts, kind) => {
      embedded.push(...texts);
      return wordAxesEmbedder.embed(texts, kind);
    },
  };
  /** Work ids cancelled now, each with the repository its chunks wait under. */
  const cancelled = new Map<string, string>();
  const cancelledNow: CancelledWork = (ids) =>
    Promise.resolve(new Map([...cancelled].filter(([id]) => ids.includes(id))));

  let sequence = 0n;
  const history: StoredEvent[] = [];
  const next = (): Position => position(1, (sequence += 1n));
  const ingested = async (documentId: string, text: string, workId: string) => {
    const [hash] = await content.put([text]);
    const event = storedIngestion({ documentId, hashes: [hash!], position: next(), project: 'p' });
    return { ...event, metadata: { ...event.metadata, correlationId: workId } };
  };
  const requested = (repoPath: string, jobId: string): StoredEvent =>
    storedJobRequest({ jobId, repoPath, position: next(), project: 'p' });
  const removed = (documentId: string): StoredEvent => ({
    type: 'DocumentRemoved',
    schemaVersion: 1,
    data: { documentId, reason: null },
    streamId: `doc-${documentId}`,
    revision: 1n,
    position: next(),
    metadata: testMetadata({ project: 'p' }),
    recordedAt: new Date().toISOString(),
  });
  const apply = async (...events: StoredEvent[]) => {
    history.push(...events);
    await projection.live.apply(events, await projection.live.checkpoint(), events.at(-1)!.position);
  };
  const rows = async () => ({
    semantic: (await db.query<{ document_id: string }>('SELECT document_id FROM search_semantic ORDER BY document_id')).map(
      (r) => r.document_id,
    ),
    deferred: (
      await db.query<{ document_id: string; deferred_for: string }>(
        'SELECT document_id, deferred_for FROM search_semantic_deferred ORDER BY document_id',
      )
    ).map((r) => `${r.document_id} ${r.deferred_for}`),
  });

  const [a, b, c, d, e] = Array.from({ length: 5 }, () => randomUUID()).sort();
  const [cancelledJob, liveWork, nextJob, cancelledNextJob] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];

  beforeAll(async () => {
    db = await openPglite();
    content = await createPostgresContentStore(db);
    ({ projection } = await createPgvectorIndex(db, content, semanticIndexProjection(embedder, cancelledNow)));
  }, 60_000);
  afterAll(() => db?.close());

  it('embeds nothing of a cancelled job and sets its chunks aside under its repository; other work is embedded', async () => {
    cancelled.set(cancelledJob, '/repo');
    await apply(await ingested(a!, 'alpha text', cancelledJob), await ingested(b!, 'bravo text', liveWork));
    expect(embedded).toEqual(['bravo text']);
    expect(await rows()).toEqual({ semantic: [b], deferred: [`${a} /repo`] });
  });

  it('drops a waiting chunk when its document is stored again by other work, or removed', async () => {
    await apply(await ingested(c!, 'charlie text', cancelledJob), await ingested(d!, 'delta text', cancelledJob));
    expect((await rows()).deferred).toEqual([`${a} /repo`, `${c} /repo`, `${d} /repo`]);
    await apply(await ingested(c!, 'charlie again', liveWork), removed(d!));
    expect(await rows()).toEqual({ semantic: [b, c], deferred: [`${a} /repo`] });
  });

  it('keeps waiting when the job that asks for the repository is cancelled itself', async () => {
    cancelled.set(cancelledNextJob, '/repo');
    const before = embedded.length;
    await apply(requested('/repo', cancelledNextJob));
    expect(embedded.length).toBe(before);
    expect((await rows()).deferred).toEqual([`${a} /repo`]);
  });

  it('embeds the waiting chunks when a job for the repository is requested, a chunk of the same batch included', async () => {
    await apply(await ingested(e!, 'echo text', cancelledJob), requested('/elsewhere', randomUUID()), requested('/repo', nextJob));
    expect(embedded.slice(-2).sort()).toEqual(['alpha text', 'echo text']);
    expect(await rows()).toEqual({ semantic: [a, b, c, e], deferred: [] });
  });

  it('comes out the same from a rebuild', async () => {
    const live = await db.query('SELECT chunk_id, value::text FROM search_semantic ORDER BY chunk_id');
    const shadow = await projection.openShadow();
    await shadow.apply(history, START, history.at(-1)!.position);
    await shadow.promote();
    expect(await db.query('SELECT chunk_id, value::text FROM search_semantic ORDER BY chunk_id')).toEqual(live);
    expect((await rows()).deferred).toEqual([]);
  });
});
