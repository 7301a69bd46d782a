import { z } from 'zod';
import { SessionNotFoundError, type SessionState } from '../src/domain/annotations.js';
import type { Position } from '../src/domain/position.js';
import { AsOfSchema, parseAsOf } from '../src/engine/asOf.js';
import { defineOperation } from '../src/operations.js';
import type { EventStore } from '../src/ports/eventStore.js';
import type { ReadModels } from '../src/ports/projections.js';
import { parseOrThrow, SessionIdSchema } from '../commands/annotationFields.js';
import { ANNOTATION_SESSIONS, type AnnotationSessionSummary } from '../projections/annotationSessions.js';
import { awaitSessionReadModels, sessionAsOf } from './annotationSessionFold.js';

export const GetProgressInputSchema = z.object({
  sessionId: SessionIdSchema,
  asOf: AsOfSchema.optional(),
});

export const ProgressSchema = z.object({
  totalChunks: z.number().int(),
  annotatedChunks: z.number().int(),
  pendingChunks: z.number().int(),
  completionPercentage: z.number(),
  pendingChunkIds: z.array(z.string()),
});
export type Progress = z.infer<typeof ProgressSchema>;

const percentage = (part: number, whole: number) =>
  whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 100;

/** Pending counts every chunk not yet annotated, including any that never arrived in a session cut short. */
export const progressOf = (
  totalChunks: number,
  annotatedChunks: number,
  pendingChunkIds: string[],
): Progress => ({
  totalChunks,
  annotatedChunks,
  pendingChunks: totalChunks - annotatedChunks,
  completionPercentage: percentage(annotatedChunks, totalChunks),
  pendingChunkIds,
});

export const progressOfState = (state: SessionState): Progress =>
  progressOf(state.expectedChunks, state.chunks.size - state.pending.size, [...state.pending]);

export interface ProgressDeps {
  store: EventStore;
  readModels: ReadModels;
  waitForProjections: (position: Position) => Promise<void>;
  /** The current state of a session the command side holds in memory, or null. */
  readCached?: <R>(sessionId: string, read: (state: SessionState) => R) => Promise<R | null>;
}

/** Progress now (from the command side's state or the session summary read model) or as it was at `asOf` (folded from events). */
export const getAnnotationProgress = async (deps: ProgressDeps, rawInput: unknown): Promise<Progress> => {
  const { sessionId, asOf } = parseOrThrow(GetProgressInputSchema, rawInput);
  if (asOf) return progressOfState(await sessionAsOf(deps.store, sessionId, parseAsOf(asOf)));
  // A session being annotated through this process is answered from its state, caught up from the
  // stream, without waiting for the read models to apply the latest batch.
  const cached = await deps.readCached?.(sessionId, progressOfState);
  if (cached) return cached;
  await awaitSessionReadModels(deps.store, deps.waitForProjections, sessionId);
  const summary = await deps.readModels.get<AnnotationSessionSummary>(ANNOTATION_SESSIONS, sessionId);
  if (!summary) throw new SessionNotFoundError(sessionId);
  return progressOf(summary.totalChunks, summary.annotatedChunks, summary.pendingChunkIds);
};

export const getProgressOperation = (deps: ProgressDeps) =>
  defineOperation({
    name: 'get_progress',
    title: 'Annotation progress',
    description:
      'Query annotation progress for a session: totals, completion percentage and the ids of pending chunks. ' +
      'With `asOf` (a position from annotation_history or an ISO timestamp), the progress as it was then.',
    toolset: 'annotations',
    writes: false,
    input: GetProgressInputSchema,
    output: ProgressSchema,
    run: (input) => getAnnotationProgress(deps, input),
  });
