import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { treeSitterChunker } from '../../infra/chunking/chunker.js';
import { createPostgresEventStore } from '../../infra/eventstore/postgresEventStore.js';
import { createPostgresContentStore } from '../../infra/postgres/postgresContentStore.js';
import { openPglite, type Database } from '../../infra/postgres/database.js';
import { streamId } from '../../src/domain/events.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { type OperationContext } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import { ingestDocument } from './ingestDocument.js';
import { documentIdOf } from '../../src/domain/documents.js';
import { ingestDocumentsOperation } from './ingestDocuments.js';

const context = (): OperationContext => ({
  actor: { subject: 'test', tenant: null, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: DEFAULT_PROJECT,
});

/**
 * A batch on the embedded store while another writer changes one of its documents: before each of
 * the batch's appends to that document's stream, the other writer appends a version of its own.
 */
describe('documents.ingest_batch against a concurrent writer', { timeout: 60_000 }, () => {
  let db: Database;
  let store: EventStore;
  let content: ContentStore;
  beforeAll(async () => {
    db = await openPglite();
    store = await createPostgresEventStore(db);
    content = await createPostgresContentStore(db);
  });
  afterAll(() => db?.close());

  it('answers the contested document failed with a conflict, stores the others, and loses no write of either', async () => {
    const contested = streamId('doc', documentIdOf(DEFAULT_PROJECT, 'contested', 'b'));
    let competing = 0;
    const racing: EventStore = {
      ...store,
      append: async (stream, events, expected) => {
        if (stream === contested) {
          competing++;
          await ingestDocument(
            { store, content, chunker: treeSitterChunker },
            { source: 'contested', sourceId: 'b', body: `The other writer's version ${competing}.` },
            { ...context(), commandId: crypto.randomUUID(), causationId: null, now: new Date().toISOString() },
          );
        }
        return store.append(stream, events, expected);
      },
    };
    const answer = await ingestDocumentsOperation({ store: racing, content, chunker: treeSitterChunker }).run(
      {
        source: 'contested',
        documents: [
          { source_id: 'a', body: 'The first document.' },
          { source_id: 'b', body: 'The batch version.' },
          { source_id: 'c', body: 'The third document.' },
        ],
      },
      context(),
    );
    expect(answer.results.map((r) => [r.source_id, r.outcome])).toEqual([
      ['a', 'created'],
      ['b', 'failed'],
      ['c', 'created'],
    ]);
    expect(answer.results[1]!.error).toMatch(/CONFLICT/);
    // Each attempt read the stream again and lost the race again; every version the other writer
    // made is stored, in order, and the batch's version is not among them.
    const stored = await store.readStream(contested);
    expect(competing).toBeGreaterThan(1);
    expect(stored.map((e) => e.revision)).toEqual(stored.map((_, i) => BigInt(i)));
    expect(stored).toHaveLength(competing);
  });

  it('stores the content of a version its batch did not foresee: a stored document given back after a change in one batch', async () => {
    const deps = { store, content, chunker: treeSitterChunker };
    const ingest = async (bodies: string[]) =>
      (await ingestDocumentsOperation(deps).run(
        { source: 'back-and-forth', documents: bodies.map((body) => ({ source_id: 'x', body })) },
        context(),
      )).results.map((r) => r.outcome);
    expect(await ingest(['Version A.'])).toEqual(['created']);
    // Read before either was stored, the second looks unchanged; it follows the first, so it is a new version.
    expect(await ingest(['Version B.', 'Version A.'])).toEqual(['updated', 'updated']);
    const events = await store.readStream(streamId('doc', documentIdOf(DEFAULT_PROJECT, 'back-and-forth', 'x')));
    expect(events).toHaveLength(3);
    const last = events.at(-1)!.data as { bodyHash: string; chunks: { textHash: string }[] };
    const texts = await content.get([last.bodyHash, ...last.chunks.map((c) => c.textHash)]);
    expect(texts.get(last.bodyHash)).toBe('Version A.');
    expect(last.chunks.every((c) => texts.has(c.textHash))).toBe(true);
  });
});
