import { z } from 'zod';
import {
  requireOpenSession,
  type AnnotationEvent,
  type AnnotationVocabulary,
  type ChunkAnnotation,
  type SessionState,
} from '../../src/domain/annotations.js';
import { commandContext } from '../../src/engine/commands.js';
import { classifyError } from '../../src/errors.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import type { Keyring } from '../../src/ports/keyring.js';
import { chunksAnnotated, decideAnnotateChunk, noteCipher, type NoteCipher } from './annotateChunk.js';
import {
  annotationFieldsInput,
  ExportedChunkSchema,
  SessionIdSchema,
  type ExportedChunk,
} from '../../src/domain/annotationFields.js';
import type { SessionRepository } from './sessionRepository.js';
import { parseInput } from '../../src/validation.js';

export const MAX_BATCH = 1_000;

const itemSchemas = new WeakMap<AnnotationVocabulary, ReturnType<typeof makeItemInput>>();
const makeItemInput = (vocabulary: AnnotationVocabulary) =>
  z.object({ chunkId: z.string().min(1) }).extend(annotationFieldsInput(vocabulary).shape);
/** Built once per vocabulary: a schema costs more to build than a batch item costs to check. */
const itemInput = (vocabulary: AnnotationVocabulary) => {
  const schema = itemSchemas.get(vocabulary) ?? makeItemInput(vocabulary);
  itemSchemas.set(vocabulary, schema);
  return schema;
};

export const annotateChunksInput = (vocabulary: AnnotationVocabulary) =>
  z.object({
    sessionId: SessionIdSchema,
    annotations: z.array(itemInput(vocabulary)).min(1).max(MAX_BATCH),
  });

/** Items are checked one by one, so the call itself only needs a session id and a list. */
const EnvelopeSchema = z.object({
  sessionId: SessionIdSchema,
  annotations: z.array(z.unknown()).min(1).max(MAX_BATCH),
});

/** Why one item failed, as the annotation tools describe errors: `type` names the error, `issues` lists bad input. */
const ItemErrorSchema = z.object({
  type: z.string(),
  message: z.string(),
  issues: z.array(z.unknown()).optional(),
});
type ItemError = z.infer<typeof ItemErrorSchema>;

/** An item's error is part of the batch's answer on every surface; one the caller cannot act on is only named. */
const itemError = (error: unknown): ItemError => {
  const classified = classifyError(error);
  if (!classified.expected) return { type: 'InternalError', message: 'Internal error' };
  const issues = classified.details?.issues;
  return { type: classified.type, message: classified.detail, ...(Array.isArray(issues) ? { issues } : {}) };
};

export type BatchItemResult =
  | { chunkId: string; success: true; data: ExportedChunk }
  | { chunkId: string; success: false; error: ItemError };

export const AnnotateChunksOutputSchema = z.object({
  results: z.array(
    z.union([
      z.object({ chunkId: z.string(), success: z.literal(true), data: ExportedChunkSchema }),
      z.object({ chunkId: z.string(), success: z.literal(false), error: ItemErrorSchema }),
    ]),
  ),
  successCount: z.number().int(),
  errorCount: z.number().int(),
});
export type AnnotateChunksOutput = z.infer<typeof AnnotateChunksOutputSchema>;

/**
 * Partial success: each item is validated and decided on its own, on the state left by the items
 * before it; an item that fails gets an error result and changes nothing. The items that succeed
 * are recorded together, in one event.
 */
export const decideAnnotateChunks = (
  sessionId: string,
  items: readonly unknown[],
  state: SessionState,
  vocabulary: AnnotationVocabulary,
  cipher: NoteCipher,
): { events: AnnotationEvent[]; result: AnnotateChunksOutput } => {
  requireOpenSession(state, sessionId);
  const schema = itemInput(vocabulary);
  const pending = new Map<string, ExportedChunk>();
  const annotations: ChunkAnnotation[] = [];
  const results = items.map((item): BatchItemResult => {
    const given = (item as { chunkId?: unknown } | null)?.chunkId;
    const chunkId = typeof given === 'string' ? given : '';
    try {
      const { chunkId: id, ...fields } = parseInput(schema, item);
      const { annotation, chunk } = decideAnnotateChunk(
        { sessionId, chunkId: id, fields },
        state,
        cipher,
        pending,
      );
      if (annotation) annotations.push(annotation);
      pending.set(id, chunk);
      return { chunkId: id, success: true, data: chunk };
    } catch (error) {
      return { chunkId, success: false, error: itemError(error) };
    }
  });
  const successCount = results.filter((r) => r.success).length;
  return {
    events: chunksAnnotated(sessionId, annotations),
    result: { results, successCount, errorCount: results.length - successCount },
  };
};

/** The chunk ids a batch names, as far as its items can be read before they are checked. */
const namedChunkIds = (items: readonly unknown[]): string[] =>
  items.flatMap((item) => {
    const id = (item as { chunkId?: unknown } | null)?.chunkId;
    return typeof id === 'string' ? [id] : [];
  });

export const annotateChunksSurfaces = {
  name: 'annotate_chunks',
  rest: {
    method: 'POST',
    path: '/annotations/sessions/{id}/annotations/batch',
    summary: 'Annotate several chunks of a session, each succeeding or failing alone',
    params: { id: 'sessionId' },
    errorFormat: 'tools',
  },
  cli: {
    command: ['annotations', 'annotate-batch'],
    description: 'annotate many chunks from a JSON file ([{chunkId, categories, ...}])',
    arguments: [
      { name: 'sessionId', field: 'sessionId' },
      { name: 'file', field: 'annotations', parse: 'json-file' },
    ],
    print: {
      line: (result: AnnotateChunksOutput) =>
        [
          `${result.successCount} annotated, ${result.errorCount} failed`,
          ...result.results.flatMap((r) => (r.success ? [] : [`  ${r.chunkId}: ${r.error.message}`])),
        ].join('\n'),
    },
  },
} as const satisfies OperationSurfaces;

export const annotateChunksOperation = (
  sessions: SessionRepository,
  vocabulary: AnnotationVocabulary,
  keyring: Keyring,
) =>
  defineOperation({
    ...annotateChunksSurfaces,
    title: 'Annotate several chunks',
    description:
      'Annotate multiple chunks in a single call (partial success semantics): one result per item, ' +
      'with the annotated chunk or the error, plus successCount and errorCount.',
    toolset: 'annotations',
    writes: true,
    scope: 'index:write',
    input: annotateChunksInput(vocabulary),
    output: AnnotateChunksOutputSchema,
    run: async (rawInput, { actor, correlationId, project }) => {
      const { sessionId, annotations } = parseInput(EnvelopeSchema, rawInput);
      const sealer = await keyring.sealer(actor);
      const { result } = await sessions.execute(
        sessionId,
        async (state) => {
          const cipher = await noteCipher(keyring, sealer, state, namedChunkIds(annotations));
          return decideAnnotateChunks(sessionId, annotations, state, vocabulary, cipher);
        },
        commandContext(actor, { correlationId, project }),
      );
      return result;
    },
  });
