import { z } from 'zod';
import {
  ANNOTATION_FIELDS,
  type AnnotationFields,
  type AnnotationVocabulary,
  type ChunkState,
} from './annotations.js';
import { hasForgotten, type OpenedAnnotationFields } from './annotationText.js';

const enumOf = (values: readonly string[]) => z.enum(values as [string, ...string[]]);

/** The annotatable fields as input, checked against a deployment's vocabulary. */
export const annotationFieldsInput = (vocabulary: AnnotationVocabulary) =>
  z.object({
    categories: z.array(enumOf(vocabulary.categories)).optional(),
    labels: z.array(enumOf(vocabulary.labels)).optional(),
    subtypes: z
      .partialRecord(enumOf(vocabulary.categories), enumOf(vocabulary.subtypes))
      .transform((subtypes) => subtypes as Record<string, string>)
      .optional()
      .describe('Subtype per category, e.g. {"fee_schedule": "participant_fee"}'),
    keywords: z.array(z.string()).optional(),
    tags: z.array(z.string()).optional(),
    notes: z.string().optional(),
    summary: z.string().optional(),
  });
export type AnnotationFieldsInput = Partial<AnnotationFields>;

export const SessionIdSchema = z.uuid().describe('The session id returned by start_session');

/** A chunk as the annotation tools export it. */
export const ExportedChunkSchema = z.object({
  chunk_id: z.string(),
  position: z.number().int(),
  categories: z.array(z.string()),
  labels: z.array(z.string()),
  subtypes: z.record(z.string(), z.string()),
  keywords: z.array(z.string()),
  tags: z.array(z.string()),
  relations: z.record(z.string(), z.array(z.string())),
  notes: z.string().nullable().describe('null once its author was forgotten'),
  summary: z.string().nullable().describe('null once its author was forgotten'),
  forgotten: z.literal(true).optional().describe('Present when some free text of this chunk was forgotten'),
});
export type ExportedChunk = z.infer<typeof ExportedChunkSchema>;

export const exportChunk = (
  chunk: Pick<ChunkState, 'chunkId' | 'position' | 'relations'> & { fields: OpenedAnnotationFields },
): ExportedChunk => {
  const { categories, labels, subtypes, keywords, tags, notes, summary } = chunk.fields;
  // The annotation tools' key order.
  return {
    chunk_id: chunk.chunkId,
    position: chunk.position,
    categories,
    labels,
    subtypes,
    keywords,
    tags,
    relations: chunk.relations,
    notes,
    summary,
    ...(hasForgotten(chunk.fields) ? { forgotten: true as const } : {}),
  };
};

/** The fields of `input` whose value differs from `current`. */
export const changedFields = (
  current: OpenedAnnotationFields,
  input: AnnotationFieldsInput,
): Partial<AnnotationFields> => {
  const changes: Record<string, unknown> = {};
  for (const field of ANNOTATION_FIELDS) {
    const value = input[field];
    if (value !== undefined && !sameValue(current[field], value)) changes[field] = value;
  }
  return changes;
};

export const sameValue = (a: unknown, b: unknown): boolean =>
  JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));

const sortKeys = (value: unknown): unknown =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : value;
