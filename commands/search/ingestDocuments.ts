import { z } from 'zod';
import { Instant } from '../../src/domain/instant.js';
import { MetadataInputSchema } from '../../src/domain/documents.js';
import { SettlingSchema } from '../../src/domain/settling.js';
import { classifyError } from '../../src/errors.js';
import { commandContext } from '../../src/engine/commands.js';
import { defineOperation, type RouteSurfaces } from '../../src/operations.js';
import { parseInput } from '../../src/validation.js';
import { ingestDocuments, type IngestDeps } from './ingestDocument.js';
import { documentIdOf } from '../../src/domain/documents.js';

/** The most documents one batch takes; a larger load is sent as several batches. */
export const MAX_BATCH_DOCUMENTS = 1000;

export const IngestDocumentsInputSchema = z.object({
  source: z.string().min(1).describe('The source these documents belong to'),
  documents: z
    .array(
      z.object({
        source_id: z.string().min(1),
        title: z.string().nullable().optional(),
        body: z.string(),
        tags: z.array(z.string()).optional(),
        updated_at: Instant.optional(),
        metadata: MetadataInputSchema.optional(),
        source_url: z.string().nullable().optional(),
      }),
    )
    .min(1)
    .max(MAX_BATCH_DOCUMENTS),
});

export const IngestDocumentsOutputSchema = z.object({
  results: z.array(
    z.object({
      source_id: z.string(),
      id: z.string(),
      outcome: z.enum(['created', 'updated', 'unchanged', 'failed']),
      chunks: z.number().int(),
      /** Why the document failed; the batch's other documents are stored all the same. */
      error: z.string().optional(),
    }),
  ),
  settling: SettlingSchema.optional(),
});

export const ingestDocumentsSurfaces = {
  name: 'documents.ingest_batch',
  toolset: 'search',
  writes: true,
  scope: 'index:write',
  input: IngestDocumentsInputSchema,
  output: IngestDocumentsOutputSchema,
  // The bulk path: the write budget, which a client sending one batch after another's answer never exhausts.
  rest: { method: 'POST', path: '/documents/batch', summary: 'Ingest a batch of documents' },
} as const satisfies RouteSurfaces;

const errorText = (error: unknown) => {
  const { code, detail } = classifyError(error);
  return `${code}: ${detail}`;
};

/** Ingests documents given inline (e.g. one JSON object per line of a JSONL file). */
export const ingestDocumentsOperation = (deps: IngestDeps) =>
  defineOperation({
    ...ingestDocumentsSurfaces,
    title: 'Ingest documents',
    description:
      'Ingest a batch of documents given inline (at most 1,000): source_id, title, body, optional tags, updated_at and metadata.',
    run: async (rawInput, context) => {
      // Checked whole before the first document is ingested: bad input appends nothing. Past that,
      // each document is stored or fails alone, and its result says which.
      const input = parseInput(IngestDocumentsInputSchema, rawInput);
      const settled = await ingestDocuments(
        deps,
        input.documents.map((doc) => ({
          source: input.source,
          sourceId: doc.source_id,
          title: doc.title ?? null,
          body: doc.body,
          tags: doc.tags,
          updatedAt: doc.updated_at,
          metadata: doc.metadata,
          sourceUrl: doc.source_url ?? null,
        })),
        commandContext(context.actor, { project: context.project, correlationId: context.correlationId }),
      );
      context.onProgress?.({ done: settled.length, total: input.documents.length });
      // A failure that is not the document's own (a lost database) fails the request: the caller sends it again.
      const unexpected = settled.find((r) => r.status === 'rejected' && !classifyError(r.reason).expected);
      if (unexpected) throw (unexpected as PromiseRejectedResult).reason;
      return {
        results: settled.map((result, i) => {
          const { source_id } = input.documents[i]!;
          if (result.status === 'fulfilled') {
            const { documentId, outcome, chunks } = result.value;
            return { source_id, id: documentId, outcome, chunks };
          }
          const id = documentIdOf(context.project, input.source, source_id);
          return { source_id, id, outcome: 'failed' as const, chunks: 0, error: errorText(result.reason) };
        }),
      };
    },
  });
