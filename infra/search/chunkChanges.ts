import type { StoredEvent } from '../../src/domain/events.js';
import { handle } from '../../src/ports/projections.js';
import type { ChunkIndexProjection, PendingChunk } from '../../src/ports/searchIndex.js';

/**
 * Per document, the chunks it has after the batch, as the projection says each event changes them:
 * only the last change counts, as each replaces all of them. A chunk's work is the correlation id
 * of the event that gave it.
 */
export const lastChanges = <Value>(
  projection: ChunkIndexProjection<Value>,
  events: readonly StoredEvent[],
): Map<string, PendingChunk[]> => {
  const byDocument = new Map<string, PendingChunk[]>();
  for (const event of events) {
    const change = handle(event, () => projection.changes(event));
    if (change)
      byDocument.set(
        change.documentId,
        change.chunks.map((chunk) => ({ chunk, workId: event.metadata.correlationId, position: event.position })),
      );
  }
  return byDocument;
};
