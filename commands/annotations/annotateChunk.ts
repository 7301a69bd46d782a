import { z } from 'zod';
import {
  requireChunk,
  requireOpenSession,
  type AnnotationEvent,
  type AnnotationVocabulary,
  type ChunkAnnotation,
  type SessionState,
} from '../../src/domain/annotations.js';
import { commandContext } from '../../src/engine/commands.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import { openFields, protectedValuesOf, sealChanges } from '../../src/domain/annotationText.js';
import type { Keyring } from '../../src/ports/keyring.js';
import type { Opener, Sealer } from '../../src/domain/protectedText.js';
import {
  annotationFieldsInput,
  changedFields,
  exportChunk,
  ExportedChunkSchema,
  SessionIdSchema,
  type AnnotationFieldsInput,
  type ExportedChunk,
} from '../../src/domain/annotationFields.js';
import type { SessionRepository } from './sessionRepository.js';
import { parseInput } from '../../src/validation.js';

export const annotateChunkInput = (vocabulary: AnnotationVocabulary) =>
  z
    .object({
      sessionId: SessionIdSchema,
      chunkId: z.string().min(1),
    })
    .extend(annotationFieldsInput(vocabulary).shape);

export interface AnnotateChunk {
  sessionId: string;
  chunkId: string;
  fields: AnnotationFieldsInput;
}

/** Opens the free text a decision compares against, and seals the free text it writes. */
export type NoteCipher = Sealer & Opener;

/** A cipher sealing as `actor` and opening what the given chunks of the session hold now. */
export const noteCipher = async (
  keyring: Keyring,
  sealer: Sealer,
  state: SessionState,
  chunkIds: Iterable<string>,
): Promise<NoteCipher> => {
  const fields = [...chunkIds].map((id) => state.chunks.get(id)?.fields);
  return { seal: sealer.seal, open: (await keyring.opener(protectedValuesOf(fields))).open };
};

/**
 * Sets the given fields of one chunk. The annotation carries only what changed, free text sealed;
 * a call that changes nothing on an already annotated chunk has none. `pending` holds chunks
 * already changed earlier in the same batch, whose state is not folded yet.
 */
export const decideAnnotateChunk = (
  command: AnnotateChunk,
  state: SessionState,
  cipher: NoteCipher,
  pending: ReadonlyMap<string, ExportedChunk> = new Map(),
): { annotation: ChunkAnnotation | null; chunk: ExportedChunk } => {
  requireOpenSession(state, command.sessionId);
  const stored = requireChunk(state, command.sessionId, command.chunkId);
  const current = pending.get(command.chunkId);
  const fields = current
    ? {
        categories: current.categories,
        labels: current.labels,
        subtypes: current.subtypes,
        keywords: current.keywords,
        tags: current.tags,
        notes: current.notes,
        summary: current.summary,
      }
    : openFields(stored.fields, cipher);
  const changes = changedFields(fields, command.fields);
  const chunk = exportChunk({ ...stored, fields: { ...fields, ...changes } });
  const annotated = stored.annotated || current !== undefined;
  if (Object.keys(changes).length === 0 && annotated) return { annotation: null, chunk };
  return { annotation: { chunkId: command.chunkId, changes: sealChanges(changes, cipher) }, chunk };
};

/** The event recording a command's annotations, if it made any. */
export const chunksAnnotated = (sessionId: string, annotations: ChunkAnnotation[]): AnnotationEvent[] =>
  annotations.length === 0
    ? []
    : [{ type: 'ChunkAnnotated', schemaVersion: 3, data: { sessionId, annotations } }];

const list = (values: readonly string[]) => values.join(', ');

export const annotateChunkSurfaces = {
  name: 'annotate_chunk',
  rest: {
    method: 'POST',
    path: '/annotations/sessions/{id}/annotations',
    summary: 'Annotate one chunk of a session',
    params: { id: 'sessionId' },
    errorFormat: 'tools',
  },
  cli: {
    command: ['annotations', 'annotate'],
    description: 'annotate one chunk from options, or many from a JSON file ([{chunkId, categories, ...}])',
    arguments: [
      { name: 'sessionId', field: 'sessionId' },
      { name: 'chunkId', field: 'chunkId', optional: true },
    ],
    options: [
      { flags: '--file <file>', field: 'annotations', parse: 'json-file', runs: 'annotate_chunks', description: 'a JSON array of annotations (annotate_chunks)' },
      { flags: '--category <category>', field: 'categories', parse: 'repeat', description: 'a category (repeatable)' },
      { flags: '--label <label>', field: 'labels', parse: 'repeat', description: 'a label (repeatable)' },
      { flags: '--subtype <category=subtype>', field: 'subtypes', parse: 'pairs', description: 'a subtype of a category (repeatable)' },
      { flags: '--keyword <keyword>', field: 'keywords', parse: 'repeat', description: 'a keyword (repeatable)' },
      { flags: '--tag <tag>', field: 'tags', parse: 'repeat', description: 'a tag (repeatable)' },
      { flags: '--notes <notes>', field: 'notes' },
      { flags: '--summary <summary>', field: 'summary' },
    ],
    print: {
      fields: {
        chunk: '{chunk_id}',
        categories: '{categories}',
        labels: '{labels}',
        subtypes: (chunk: ExportedChunk) =>
          list(Object.entries(chunk.subtypes).map(([category, subtype]) => `${category}=${subtype}`)),
        keywords: '{keywords}',
        tags: '{tags}',
        notes: '{notes}',
        summary: '{summary}',
        forgotten: '{forgotten}',
      },
    },
  },
} as const satisfies OperationSurfaces;

export const annotateChunkOperation = (
  sessions: SessionRepository,
  vocabulary: AnnotationVocabulary,
  keyring: Keyring,
) => {
  const input = annotateChunkInput(vocabulary);
  return defineOperation({
    ...annotateChunkSurfaces,
    title: 'Annotate a chunk',
    description:
      'Annotate a single chunk with categories, subtypes, and metadata. Given fields replace the stored ones.',
    toolset: 'annotations',
    writes: true,
    scope: 'index:write',
    input,
    output: ExportedChunkSchema,
    run: async (rawInput, { actor, correlationId, project }) => {
      const { sessionId, chunkId, ...fields } = parseInput(input, rawInput);
      const sealer = await keyring.sealer(actor);
      const { result } = await sessions.execute(
        sessionId,
        async (state) => {
          const cipher = await noteCipher(keyring, sealer, state, [chunkId]);
          const { annotation, chunk } = decideAnnotateChunk({ sessionId, chunkId, fields }, state, cipher);
          return { events: chunksAnnotated(sessionId, annotation ? [annotation] : []), result: chunk };
        },
        commandContext(actor, { correlationId, project }),
      );
      return result;
    },
  });
};
