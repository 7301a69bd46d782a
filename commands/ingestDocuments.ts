import { z } from 'zod';
import { commandContext } from '../src/engine/commands.js';
import { defineOperation, type RouteSurfaces } from '../src/operations.js';
import { parseInput } from '../src/validation.js';
import { ingestDocument, type IngestDeps } from './ingestDocument.js';

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
        updated_at: z.iso.datetime({ offset: true }).optional(),
        metadata: z.record(z.string(), z.unknown()).optional(),
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
      outcome: z.enum(['created', 'updated', 'unchanged']),
      chunks: z.number().int(),
    }),
  ),
});

export const ingestDocumentsSurfaces = {
  name: 'documents.ingest_batch',
  toolset: 'search',
  writes: true,
  scope: 'index:write',
  input: IngestDocumentsInputSchema,
  output: IngestDocumentsOutputSchema,
  // The bulk path: its own budget, which a client sending one batch after another's answer never exhausts.
  rest: { method: 'POST', path: '/documents/batch', summary: 'Ingest a batch of documents', rateClass: 'bulk' },
} as const satisfies RouteSurfaces;

/** Ingests documents given inline (e.g. one JSON object per line of a JSONL file). */
export const ingestDocumentsOperation = (deps: IngestDeps) =>
  defineOperation({
    ...ingestDocumentsSurfaces,
    title: 'Ingest documents',
    description:
      'Ingest a batch of documents given inline (at most 1,000): source_id, title, body, optional tags, updated_at and metadata.',
    run: async (rawInput, context) => {
      // Checked whole before the first document is ingested: bad input appends nothing.
      const input = parseInput(IngestDocumentsInputSchema, rawInput);
      const results = [];
      for (const doc of input.documents) {
        const result = await ingestDocument(
          deps,
          {
            source: input.source,
            sourceId: doc.source_id,
            title: doc.title ?? null,
            body: doc.body,
            tags: doc.tags,
            updatedAt: doc.updated_at,
            metadata: doc.metadata,
            sourceUrl: doc.source_url ?? null,
          },
          commandContext(context.actor, { project: context.project, correlationId: context.correlationId }),
        );
        results.push({ source_id: doc.source_id, id: result.documentId, outcome: result.outcome, chunks: result.chunks });
        context.onProgress?.({ done: results.length, total: input.documents.length });
      }
      return { results };
    },
  });
