import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { treeSitterChunker } from '../infra/chunking/chunker.js';
import { createPostgresEventStore } from '../infra/eventstore/postgresEventStore.js';
import { createPostgresContentStore } from '../infra/postgres/postgresContentStore.js';
import { openPglite, type Database } from '../infra/postgres/database.js';
import { streamId } from '../src/domain/events.js';
import type { EventStore } from '../src/ports/eventStore.js';
import { DEFAULT_PROJECT, type OperationContext } from '../src/operations.js';
import type { ContentStore } from '../src/ports/contentStore.js';
import { documentIdOf, ingestDocument } from './ingestDocument.js';
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
});
