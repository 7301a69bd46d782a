import type { ListChunksOutput } from '../../queries/listChunks.js';
import { ValidationError } from '../errors.js';
import { DEFAULT_PROJECT, type Operation } from '../operations.js';
import type { ChunkSource } from '../ports/chunkSource.js';

/** Sessions start from indexed content of `project` through the ledger's `documents.chunks` query. */
export const chunkSourceFromOperations = (operations: () => readonly Operation[], project = DEFAULT_PROJECT): ChunkSource => {
  const chunks = async (input: Record<string, unknown>) => {
    const operation = operations().find((o) => o.name === 'documents.chunks');
    if (!operation) throw new ValidationError('no document index is configured');
    const output = (await operation.run(input, {
      actor: { subject: 'system', tenant: null, via: 'system' },
      correlationId: crypto.randomUUID(),
      project,
    })) as ListChunksOutput;
    return output.chunks.map((c, position) => ({ chunkId: c.chunk_id, position, text: c.text }));
  };
  return {
    chunksOfDocuments: (documentIds) => chunks({ document_ids: documentIds, limit: 10_000 }),
    chunksMatching: (query, limit) => chunks({ query, limit }),
  };
};
