import { z } from 'zod';
import type { DocumentView } from '../../src/domain/documentView.js';
import { defineOperation } from '../../src/operations.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import type { ReadModels } from '../../src/ports/projections.js';
import type { KeywordIndex } from '../../src/ports/searchIndex.js';
import { parseInput } from '../../src/validation.js';

export const ListChunksInputSchema = z
  .object({
    document_ids: z.array(z.uuid()).max(1000).optional().describe('Every chunk of these documents, in order'),
    query: z.string().trim().min(1).optional().describe('Or: the chunks that best match this keyword query'),
    limit: z.number().int().min(1).max(10_000).default(100),
  })
  .refine((input) => (input.document_ids === undefined) !== (input.query === undefined), {
    message: 'give either document_ids or query',
  });

const ChunkSchema = z.object({
  chunk_id: z.string(),
  document_id: z.string(),
  index: z.number().int(),
  text: z.string(),
  start_line: z.number().int().nullable(),
  end_line: z.number().int().nullable(),
  kind: z.string().nullable(),
  symbol: z.string().nullable(),
});
export const ListChunksOutputSchema = z.object({ chunks: z.array(ChunkSchema) });
export type ListChunksOutput = z.infer<typeof ListChunksOutputSchema>;

export interface ListChunksDeps {
  readModels: ReadModels;
  content: ContentStore;
  keyword: KeywordIndex;
}

/** Chunks with their texts: of given documents, or best matching a query. */
export const listChunks = async (deps: ListChunksDeps, rawInput: unknown, project: string): Promise<ListChunksOutput> => {
  const input = parseInput(ListChunksInputSchema, rawInput);
  const hits = input.query ? await deps.keyword.search(input.query, { project }, input.limit) : [];
  const documentIds = input.document_ids ?? [...new Set(hits.map((h) => h.documentId))];
  const byId = await deps.readModels.getMany<DocumentView>('documents', documentIds);
  const documents = documentIds
    .map((id) => byId.get(id))
    .filter((doc): doc is DocumentView => doc !== undefined && doc.project === project);
  const refs = documents.flatMap((doc) => doc.chunks.map((chunk) => ({ doc, chunk })));
  const wanted = input.query ? hits.map((h) => refs.find((r) => r.chunk.id === h.chunkId)).filter((r) => r !== undefined) : refs;
  const page = wanted.slice(0, input.limit);
  const texts = await deps.content.get(page.map((r) => r.chunk.textHash));
  return {
    chunks: page.map(({ doc, chunk }) => ({
      chunk_id: chunk.id,
      document_id: doc.id,
      index: chunk.index,
      text: texts.get(chunk.textHash) ?? '',
      start_line: chunk.startLine,
      end_line: chunk.endLine,
      kind: chunk.kind,
      symbol: chunk.symbol,
    })),
  };
};

export const listChunksOperation = (deps: ListChunksDeps) =>
  defineOperation({
    name: 'documents.chunks',
    title: 'List chunks',
    description: 'The chunks (with ids, texts and line ranges) of given documents, or those best matching a keyword query.',
    toolset: 'search',
    writes: false,
    input: ListChunksInputSchema,
    output: ListChunksOutputSchema,
    run: (input, context) => listChunks(deps, input, context.project),
  });
