import { z } from 'zod';
import { MetadataInputSchema } from '../src/domain/documents.js';
import { commandContext } from '../src/engine/commands.js';
import { defineOperation } from '../src/operations.js';
import { parseInput } from '../src/validation.js';
import { ingestDocument, type IngestDeps } from './ingestDocument.js';

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
        metadata: MetadataInputSchema.optional(),
        source_url: z.string().nullable().optional(),
      }),
    )
    .min(1)
    .max(1000),
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

/** Ingests documents given inline (e.g. one JSON object per line of a JSONL file). */
export const ingestDocumentsOperation = (deps: IngestDeps) =>
  defineOperation({
    name: 'documents.ingest_batch',
    title: 'Ingest documents',
    description: 'Ingest documents given inline: source_id, title, body, optional tags, updated_at and metadata.',
    toolset: 'search',
    writes: true,
    scope: 'index:write',
    input: IngestDocumentsInputSchema,
    output: IngestDocumentsOutputSchema,
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
