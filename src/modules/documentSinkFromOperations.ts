import { UnavailableError, ValidationError } from '../errors.js';
import type { FeatureApis } from '../module.js';
import { callOperation } from '../operations.js';
import { DEFAULT_PROJECT } from '../domain/workspace.js';
import type { DocumentSink } from '../ports/documentSink.js';

/** Connectors hand documents to the search feature's batch ingest. */
export const documentSinkFromOperations = (features: () => FeatureApis): DocumentSink => ({
  async ingest(document) {
    const search = features().search;
    if (!search) throw new UnavailableError('Document ingestion is not available');
    const output = await callOperation(
      search.ingest,
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
      { onBehalf: true },
    );
    const [result] = output.results;
    // A document refused on its own account (its metadata nested too deep, say) is the source's error to see.
    if (result!.outcome === 'failed') {
      throw new ValidationError(`Document '${document.sourceId}' of '${document.source}' was not ingested: ${result!.error}`);
    }
    return result!.outcome;
  },
});
