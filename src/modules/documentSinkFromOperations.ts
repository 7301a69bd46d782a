import { UnavailableError } from '../errors.js';
import { DEFAULT_PROJECT, type Operation } from '../operations.js';
import type { DocumentSink } from '../ports/documentSink.js';

/** Connectors hand documents to the ledger's `documents.ingest_batch` command. */
export const documentSinkFromOperations = (operations: () => readonly Operation[]): DocumentSink => ({
  async ingest(document) {
    const operation = operations().find((o) => o.name === 'documents.ingest_batch');
    if (!operation) throw new UnavailableError('Document ingestion is not available');
    const output = (await operation.run(
      {
        source: document.source,
        documents: [
          {
            source_id: document.sourceId,
            title: document.title,
            body: document.body,
            updated_at: document.updatedAt ?? undefined,
            metadata: document.metadata,
          },
        ],
      },
      {
        actor: { subject: `connector:${document.source}`, tenant: null, via: 'system' },
        correlationId: crypto.randomUUID(),
        project: DEFAULT_PROJECT,
      },
    )) as { results: { outcome: 'created' | 'updated' | 'unchanged' }[] };
    return output.results[0]!.outcome;
  },
});
