import type { z } from 'zod';
import type { ListChunksInputSchema } from '../../queries/search/listChunks.js';
import { ValidationError } from '../errors.js';
import type { FeatureApis } from '../module.js';
import { callOperation } from '../operations.js';
import { DEFAULT_PROJECT } from '../domain/workspace.js';
import type { ChunkSource } from '../ports/chunkSource.js';

/** Sessions start from indexed content of `project` through the search feature's chunk listing. */
export const chunkSourceFromOperations = (features: () => FeatureApis, project = DEFAULT_PROJECT): ChunkSource => {
  const chunks = async (input: z.output<typeof ListChunksInputSchema>) => {
    const search = features().search;
    if (!search) throw new ValidationError('no document index is configured');
    const system = { actor: { subject: 'system', tenant: null, via: 'system' as const }, correlationId: crypto.randomUUID(), project };
    const output = await callOperation(search.chunks, input, system, { onBehalf: true });
    return output.chunks.map((c, position) => ({ chunkId: c.chunk_id, position, text: c.text }));
  };
  return {
    chunksOfDocuments: (documentIds) => chunks({ document_ids: [...documentIds], limit: 10_000 }),
    chunksMatching: (query, limit) => chunks({ query, limit }),
  };
};
