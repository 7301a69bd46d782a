import { z } from 'zod';
import {
  RelationTypeSchema,
  requireChunk,
  requireOpenSession,
  type AnnotationEvent,
  type RelationType,
  type SessionState,
} from '../../src/domain/annotations.js';
import { commandContext } from '../../src/engine/commands.js';
import { ValidationError } from '../../src/errors.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import { SessionIdSchema } from '../../src/domain/annotationFields.js';
import type { SessionRepository } from './sessionRepository.js';
import { parseInput } from '../../src/validation.js';

export const AddRelationInputSchema = z.object({
  sessionId: SessionIdSchema,
  sourceChunkId: z.string().min(1),
  targetChunkId: z.string().min(1),
  relationType: RelationTypeSchema,
});
export type AddRelation = z.infer<typeof AddRelationInputSchema>;

export const AddRelationOutputSchema = z.object({
  message: z.string(),
  sourceChunkId: z.string(),
  targetChunkId: z.string(),
  relationType: RelationTypeSchema,
});

/** A directed relation between two chunks of the session; adding one that exists changes nothing. */
export const decideAddRelation = (command: AddRelation, state: SessionState): AnnotationEvent[] => {
  requireOpenSession(state, command.sessionId);
  if (command.sourceChunkId === command.targetChunkId) {
    throw new ValidationError('A chunk cannot be related to itself', {
      issues: [{ path: ['targetChunkId'], message: 'must differ from sourceChunkId', code: 'custom' }],
    });
  }
  const source = requireChunk(state, command.sessionId, command.sourceChunkId);
  requireChunk(state, command.sessionId, command.targetChunkId);
  const type: RelationType = command.relationType;
  if (source.relations[type]?.includes(command.targetChunkId)) return [];
  return [{ type: 'RelationAdded', schemaVersion: 1, data: { ...command } }];
};

export const addRelationSurfaces = {
  name: 'add_relation',
  rest: {
    method: 'POST',
    path: '/annotations/sessions/{id}/relations',
    summary: 'Relate two chunks of a session',
    params: { id: 'sessionId' },
    errorFormat: 'tools',
  },
} as const satisfies OperationSurfaces;

export const addRelationOperation = (sessions: SessionRepository) =>
  defineOperation({
    ...addRelationSurfaces,
    title: 'Relate two chunks',
    description:
      'Define a directed relation (dependencies, footnotes or references) between two chunks of a session.',
    toolset: 'annotations',
    writes: true,
    scope: 'index:write',
    input: AddRelationInputSchema,
    output: AddRelationOutputSchema,
    run: async (rawInput, { actor, correlationId, project }) => {
      const command = parseInput(AddRelationInputSchema, rawInput);
      await sessions.execute(
        command.sessionId,
        (state) => ({ events: decideAddRelation(command, state), result: undefined }),
        commandContext(actor, { correlationId, project }),
      );
      const { sourceChunkId, targetChunkId, relationType } = command;
      return { message: 'Relation added', sourceChunkId, targetChunkId, relationType };
    },
  });
