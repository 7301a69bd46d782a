import { z } from 'zod';
import type { SessionState } from './annotations.js';

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
