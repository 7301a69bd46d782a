import { z } from 'zod';
import { SessionNotFoundError, type SessionState } from '../../src/domain/annotations.js';
import { ProgressSchema, progressOfState, type Progress } from '../../src/domain/annotationProgress.js';
import { AsOfSchema, parseAsOf } from '../../src/domain/asOf.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { SessionIdSchema } from '../../src/domain/annotationFields.js';
import { sessionAsOf } from '../../src/services/sessionReads.js';
import { parseInput } from '../../src/validation.js';

export const GetProgressInputSchema = z.object({
  sessionId: SessionIdSchema,
  asOf: AsOfSchema.optional(),
});

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

export const getProgressSurfaces = {
  name: 'get_progress',
  rest: {
    method: 'GET',
    path: '/annotations/sessions/{id}/progress',
    summary: 'Progress of a session, now or at a past moment',
    params: { id: 'sessionId' },
    query: ['asOf'],
    errorFormat: 'tools',
  },
  cli: {
    command: ['annotations', 'progress'],
    description: 'totals, completion and pending chunks of a session, now or at a past moment',
    arguments: [{ name: 'sessionId', field: 'sessionId' }],
    options: [{ flags: '--as-of <moment>', field: 'asOf', description: 'a position from `annotations history` or an ISO timestamp' }],
    print: {
      fields: {
        annotated: '{annotatedChunks} of {totalChunks} chunks ({completionPercentage}%)',
        pending: (p: Progress) => (p.pendingChunks ? `${p.pendingChunks}: ${p.pendingChunkIds.join(', ')}` : '0'),
      },
    },
  },
} as const satisfies OperationSurfaces;

export const getProgressOperation = (deps: ProgressDeps) =>
  defineOperation({
    ...getProgressSurfaces,
    title: 'Annotation progress',
    description:
      'Query annotation progress for a session: totals, completion percentage and the ids of pending chunks. ' +
      'With `asOf` (a position from annotations.history or an ISO timestamp), the progress as it was then.',
    toolset: 'annotations',
    writes: false,
    input: GetProgressInputSchema,
    output: ProgressSchema,
    run: (input) => getAnnotationProgress(deps, input),
  });
