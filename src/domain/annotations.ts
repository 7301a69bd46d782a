import { z } from 'zod';

export const RelationTypeSchema = z.enum(['dependencies', 'footnotes', 'references']);

export const SessionChunkSchema = z.object({
  chunkId: z.string().min(1),
  position: z.number().int().nonnegative(),
  text: z.string(),
});

/** The annotatable fields; a `ChunkAnnotated` event carries only the ones that changed. */
export const AnnotationFieldsSchema = z.object({
  categories: z.array(z.string()),
  labels: z.array(z.string()),
  subtypes: z.array(z.string()),
  keywords: z.array(z.string()),
  tags: z.array(z.string()),
  notes: z.string(),
  summary: z.string(),
});

export const AnnotationSessionStartedSchema = z.object({
  type: z.literal('AnnotationSessionStarted'),
  schemaVersion: z.literal(1),
  data: z.object({
    sessionId: z.uuid(),
    name: z.string().nullable(),
    chunks: z.array(SessionChunkSchema).min(1),
  }),
});

export const ChunkAnnotatedSchema = z.object({
  type: z.literal('ChunkAnnotated'),
  schemaVersion: z.literal(1),
  data: z.object({
    sessionId: z.uuid(),
    chunkId: z.string().min(1),
    changes: AnnotationFieldsSchema.partial(),
  }),
});

export const RelationAddedSchema = z.object({
  type: z.literal('RelationAdded'),
  schemaVersion: z.literal(1),
  data: z.object({
    sessionId: z.uuid(),
    fromChunkId: z.string().min(1),
    toChunkId: z.string().min(1),
    relationType: RelationTypeSchema,
  }),
});

export const AnnotationEventSchemas = [
  AnnotationSessionStartedSchema,
  ChunkAnnotatedSchema,
  RelationAddedSchema,
] as const;
