import { z } from 'zod';

export const ChunkSchema = z.object({
  id: z.uuid(),
  index: z.number().int().nonnegative(),
  text: z.string(),
  startLine: z.number().int().positive().nullable(),
  endLine: z.number().int().positive().nullable(),
  /** For code: `function`, `class`, `method`, … or `lines` for a line-window fallback. */
  kind: z.string().nullable(),
  symbol: z.string().nullable(),
});
export type Chunk = z.infer<typeof ChunkSchema>;

export const DocumentIngestedSchema = z.object({
  type: z.literal('DocumentIngested'),
  schemaVersion: z.literal(1),
  data: z.object({
    documentId: z.uuid(),
    source: z.string().min(1),
    sourceId: z.string().min(1),
    sourceUrl: z.string().nullable(),
    title: z.string().nullable(),
    author: z.string().nullable(),
    createdAt: z.iso.datetime({ offset: true }),
    updatedAt: z.iso.datetime({ offset: true }),
    contentType: z.string().min(1),
    tags: z.array(z.string()),
    metadata: z.record(z.string(), z.unknown()),
    /** sha256 of the body; the body itself lives in the content-addressed body store. */
    bodyHash: z.string().regex(/^[a-f0-9]{64}$/),
    bodyBytes: z.number().int().nonnegative(),
    chunks: z.array(ChunkSchema),
  }),
});

export const DocumentRemovedSchema = z.object({
  type: z.literal('DocumentRemoved'),
  schemaVersion: z.literal(1),
  data: z.object({
    documentId: z.uuid(),
    reason: z.string().nullable(),
  }),
});

export const DocumentEventSchemas = [DocumentIngestedSchema, DocumentRemovedSchema] as const;
