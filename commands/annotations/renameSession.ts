import { z } from 'zod';
import { SessionNotFoundError, type AnnotationEvent, type SessionState } from '../../src/domain/annotations.js';
import { commandContext } from '../../src/engine/commands.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import { SessionIdSchema } from '../../src/domain/annotationFields.js';
import { parseInput } from '../../src/validation.js';
import type { SessionRepository } from './sessionRepository.js';

export const RenameSessionInputSchema = z.object({
  sessionId: SessionIdSchema,
  name: z.string().trim().min(1).max(200).describe('The new name to recognise the session by'),
});
export type RenameSession = z.infer<typeof RenameSessionInputSchema>;

export const RenameSessionOutputSchema = z.object({ sessionId: z.string(), name: z.string(), message: z.string() });

/** A session keeps its chunks and annotations under a new name; the name it has already changes nothing. */
export const decideRenameSession = (command: RenameSession, state: SessionState): AnnotationEvent[] => {
  if (state.sessionId === null) throw new SessionNotFoundError(command.sessionId);
  if (state.name === command.name) return [];
  return [{ type: 'SessionRenamed', schemaVersion: 1, data: { sessionId: command.sessionId, name: command.name } }];
};

export const renameSessionSurfaces = {
  name: 'annotations.rename_session',
  rest: {
    method: 'PATCH',
    path: '/annotations/sessions/{id}',
    summary: 'Rename an annotation session',
    params: { id: 'sessionId' },
    errorFormat: 'tools',
  },
  cli: {
    command: ['annotations', 'rename'],
    description: 'give a session a new name',
    arguments: [
      { name: 'sessionId', field: 'sessionId' },
      { name: 'name', field: 'name' },
    ],
    print: { line: 'Renamed session {sessionId} to {name}.' },
  },
} as const satisfies OperationSurfaces;

export const renameSessionOperation = (sessions: SessionRepository) =>
  defineOperation({
    ...renameSessionSurfaces,
    title: 'Rename an annotation session',
    description: 'Give an annotation session a new name; its chunks and annotations stay as they are.',
    toolset: 'annotations',
    writes: true,
    scope: 'index:write',
    input: RenameSessionInputSchema,
    output: RenameSessionOutputSchema,
    run: async (rawInput, { actor, correlationId, project }) => {
      const command = parseInput(RenameSessionInputSchema, rawInput);
      await sessions.execute(
        command.sessionId,
        (state) => ({ events: decideRenameSession(command, state), result: undefined }),
        commandContext(actor, { correlationId, project }),
      );
      return { sessionId: command.sessionId, name: command.name, message: 'Session renamed' };
    },
  });
