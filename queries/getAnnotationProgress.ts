import { z } from 'zod';
import { SessionNotFoundError, type SessionState } from '../src/domain/annotations.js';
import { AsOfSchema, parseAsOf } from '../src/engine/asOf.js';
import { defineOperation } from '../src/operations.js';
import type { EventStore } from '../src/ports/eventStore.js';
import { SessionIdSchema } from '../commands/annotationFields.js';
import { sessionAsOf } from './annotationSessionFold.js';
import { parseInput } from '../src/validation.js';

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
  /** The current state of a session, caught up from its stream (the command side's, kept in memory). */
  readSession: <R>(sessionId: string, read: (state: SessionState) => R) => Promise<R | null>;
}

/**
 * Progress now, from the session's state caught up from its stream (so it includes every write
 * acknowledged, without waiting for read models), or as it was at `asOf`.
 */
export const getAnnotationProgress = async (deps: ProgressDeps, rawInput: unknown): Promise<Progress> => {
  const { sessionId, asOf } = parseInput(GetProgressInputSchema, rawInput);
  if (asOf) return progressOfState(await sessionAsOf(deps.store, sessionId, parseAsOf(asOf)));
  const progress = await deps.readSession(sessionId, progressOfState);
  if (!progress) throw new SessionNotFoundError(sessionId);
  return progress;
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
