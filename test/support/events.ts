import { randomUUID } from 'node:crypto';
import type { Database } from '../../infra/postgres/database.js';
import { categoryOf, validateEvent, type DomainEvent, type StoredEvent } from '../../src/domain/events.js';
import { position, type Position } from '../../src/domain/position.js';
import { EventMetadataSchema, type EventMetadata } from '../../src/domain/metadata.js';
import type { NewEvent } from '../../src/ports/eventStore.js';

/** Valid metadata with fresh ids; `overrides` win. */
export const testMetadata = (overrides: Partial<EventMetadata> = {}): EventMetadata =>
  EventMetadataSchema.parse({
    eventId: randomUUID(),
    commandId: randomUUID(),
    correlationId: randomUUID(),
    causationId: null,
    actor: { subject: 'test', tenant: null, via: 'system' },
    project: 'test',
    occurredAt: new Date().toISOString(),
    ...overrides,
  });

/** A small valid event to fill streams with when its content does not matter. */
export const sampleEvent = (): DomainEvent => ({
  type: 'IndexingJobStarted',
  schemaVersion: 1,
  data: { jobId: randomUUID(), runnerId: 'runner-1' },
});

/** Any catalog event made ready to append: validated, with metadata (fresh ids unless overridden). */
export const newEvent = (
  event: DomainEvent = sampleEvent(),
  metadata: Partial<EventMetadata> = {},
): NewEvent => ({
  ...validateEvent(event),
  metadata: testMetadata(metadata),
});

export const newEvents = (
  count: number,
  metadata: Partial<Omit<EventMetadata, 'eventId'>> = {},
): NewEvent[] => Array.from({ length: count }, () => newEvent(sampleEvent(), metadata));

/**
 * Appends past today's checks, as an older version of the ledger could have (e.g. text holding a
 * NUL); answers the event's position.
 */
export const appendUnchecked = async (
  db: Database,
  stream: string,
  event: DomainEvent,
  metadata: Partial<EventMetadata> = {},
): Promise<Position> => {
  const meta = testMetadata(metadata);
  const [row] = await db.query<{ transaction_id: string; global_position: string }>(
    `SELECT transaction_id, global_position::text FROM ledger_append($1, 'any', $2, $3::uuid, ARRAY[$4]::text[],
       ARRAY[$5::integer], ARRAY[$6::json], ARRAY[$7::json], ARRAY[$8]::text[])`,
    [
      stream,
      categoryOf(stream),
      meta.eventId,
      event.type,
      event.schemaVersion,
      JSON.stringify(event.data),
      JSON.stringify(meta),
      meta.project,
    ],
  );
  return position(row!.transaction_id, row!.global_position);
};

/** A document as a stored DocumentIngested event: one chunk per hash (texts already in the content store). */
export interface TestIngestion {
  documentId: string;
  position: Position;
  /** Content hashes of the chunks' texts, in order; the first stands for the body too. */
  hashes: readonly string[];
  /** The chunks' ids, one per hash; fresh ones when absent. */
  chunkIds?: readonly string[];
  project?: string;
  source?: string;
  title?: string | null;
  tags?: string[];
  updatedAt?: string;
}

export const storedIngestion = (doc: TestIngestion): StoredEvent => ({
  type: 'DocumentIngested',
  schemaVersion: 1,
  data: {
    documentId: doc.documentId,
    source: doc.source ?? 'filesystem',
    sourceId: `${doc.documentId}.md`,
    sourceUrl: null,
    title: doc.title ?? null,
    author: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: doc.updatedAt ?? '2026-01-01T00:00:00.000Z',
    contentType: 'text/markdown',
    tags: doc.tags ?? [],
    metadata: {},
    bodyHash: doc.hashes[0]!,
    bodyBytes: 1,
    chunks: doc.hashes.map((textHash, index) => ({
      id: doc.chunkIds?.[index] ?? randomUUID(),
      index,
      startLine: null,
      endLine: null,
      kind: null,
      symbol: null,
      textHash,
    })),
  },
  streamId: `doc-${doc.documentId}`,
  revision: 0n,
  position: doc.position,
  metadata: testMetadata(doc.project === undefined ? {} : { project: doc.project }),
  recordedAt: new Date().toISOString(),
});

/** The chunk ids of a stored ingestion, in order. */
export const chunkIdsOf = (event: StoredEvent): string[] =>
  (event.data as { chunks: { id: string }[] }).chunks.map((chunk) => chunk.id);

/** An indexing job for `repoPath` as a stored IndexingJobRequested event, in `project`. */
export const storedJobRequest = ({
  jobId,
  repoPath,
  position,
  project,
}: {
  jobId: string;
  repoPath: string;
  position: Position;
  project: string;
}): StoredEvent => ({
  type: 'IndexingJobRequested',
  schemaVersion: 1,
  data: { jobId, repoPath, forceReindex: false, include: [], exclude: [] },
  streamId: `job-${jobId}`,
  revision: 0n,
  position,
  metadata: testMetadata({ project }),
  recordedAt: new Date().toISOString(),
});
