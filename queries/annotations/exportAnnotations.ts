import { z } from 'zod';
import { emptyAnnotation, SessionNotFoundError, type SessionState } from '../../src/domain/annotations.js';
import { AsOfSchema, parseAsOf } from '../../src/domain/asOf.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import { openFields, protectedValuesOf } from '../../src/domain/annotationText.js';
import type { Keyring } from '../../src/ports/keyring.js';
import type { Opener } from '../../src/domain/protectedText.js';
import {
  exportChunk,
  ExportedChunkSchema,
  SessionIdSchema,
} from '../../src/domain/annotationFields.js';
import {
  ANNOTATION_CHUNK_LISTS,
  ANNOTATION_CHUNKS,
  type AnnotationChunkList,
  type AnnotationChunkRow,
} from '../../src/domain/annotationChunkViews.js';
import { awaitSessionReadModels, sessionAsOf } from '../../src/services/sessionReads.js';
import type { ProgressDeps } from './getAnnotationProgress.js';
import type { Position } from '../../src/domain/position.js';
import type { ReadModels } from '../../src/ports/projections.js';
import { parseInput } from '../../src/validation.js';

export const ExportAnnotationsInputSchema = z.object({
  sessionId: SessionIdSchema,
  asOf: AsOfSchema.optional(),
});

export const ExportSchema = z.object({ chunks: z.array(ExportedChunkSchema) });
export type AnnotationExport = z.infer<typeof ExportSchema>;

export const exportOfState = (state: SessionState, opener: Opener): AnnotationExport => ({
  // Chunks are added in position order, so the map already iterates in that order.
  chunks: [...state.chunks.values()].map((chunk) =>
    exportChunk({ ...chunk, fields: openFields(chunk.fields, opener) }),
  ),
});

const exportOfReadModels = async (
  { readModels, keyring }: ExportDeps,
  sessionId: string,
): Promise<AnnotationExport> => {
  const list = await readModels.get<AnnotationChunkList>(ANNOTATION_CHUNK_LISTS, sessionId);
  if (!list) throw new SessionNotFoundError(sessionId);
  const { items } = await readModels.find<AnnotationChunkRow>(ANNOTATION_CHUNKS, { where: { sessionId } });
  const rows = new Map(items.map((row) => [row.chunkId, row]));
  const opener = await keyring.opener(protectedValuesOf(items));
  return {
    chunks: list.chunks.map(([chunkId, position]) => {
      const row = rows.get(chunkId);
      const { categories, labels, subtypes, keywords, tags, notes, summary } = row ?? emptyAnnotation();
      const fields = { categories, labels, subtypes, keywords, tags, notes, summary };
      return exportChunk({
        chunkId,
        position,
        relations: row?.relations ?? {},
        fields: openFields(fields, opener),
      });
    }),
  };
};

export interface ExportDeps extends ProgressDeps {
  readModels: ReadModels;
  waitForProjections: (position: Position) => Promise<void>;
  keyring: Keyring;
}

/** The session's annotations now (from read models) or exactly as they were at `asOf` (folded from events). */
export const exportAnnotations = async (deps: ExportDeps, rawInput: unknown): Promise<AnnotationExport> => {
  const { sessionId, asOf } = parseInput(ExportAnnotationsInputSchema, rawInput);
  if (asOf) {
    const state = await sessionAsOf(deps.store, sessionId, parseAsOf(asOf));
    const opener = await deps.keyring.opener(
      protectedValuesOf([...state.chunks.values()].map((c) => c.fields)),
    );
    return exportOfState(state, opener);
  }
  await awaitSessionReadModels(deps.store, deps.waitForProjections, sessionId);
  return exportOfReadModels(deps, sessionId);
};

const list = (values: readonly string[]) => values.join(', ');

export const exportAnnotationsSurfaces = {
  name: 'export_annotations',
  rest: {
    method: 'GET',
    path: '/annotations/sessions/{id}/export',
    summary: 'The annotations of every chunk of a session, now or at a past moment',
    params: { id: 'sessionId' },
    query: ['asOf'],
    errorFormat: 'tools',
  },
  cli: {
    command: ['annotations', 'export'],
    description: 'the annotations of every chunk, now or exactly as they were at a past moment',
    arguments: [{ name: 'sessionId', field: 'sessionId' }],
    options: [{ flags: '--as-of <moment>', field: 'asOf', description: 'a position from `annotations history` or an ISO timestamp' }],
    print: {
      table: {
        rows: 'chunks',
        columns: {
          chunk: '{chunk_id}',
          position: '{position}',
          categories: (c: AnnotationExport['chunks'][number]) => list(c.categories),
          labels: (c: AnnotationExport['chunks'][number]) => list(c.labels),
          tags: (c: AnnotationExport['chunks'][number]) => list(c.tags),
          notes: '{notes}',
        },
        empty: 'No chunks.',
      },
    },
  },
} as const satisfies OperationSurfaces;

export const exportAnnotationsOperation = (deps: ExportDeps) =>
  defineOperation({
    ...exportAnnotationsSurfaces,
    title: 'Export annotations',
    description:
      'Export complete annotation JSON for the session, one entry per chunk in position order. ' +
      'With `asOf` (a position from annotations.history or an ISO timestamp), exactly as it was then.',
    toolset: 'annotations',
    writes: false,
    input: ExportAnnotationsInputSchema,
    output: ExportSchema,
    run: (input) => exportAnnotations(deps, input),
  });
