import { ValidationError } from '../src/errors.js';
import { z } from 'zod';
import { RebuildProgressSchema, type ProjectionRunner } from '../src/engine/projectionRunner.js';
import { defineOperation } from '../src/operations.js';

export const RebuildProjectionInputSchema = z
  .object({ name: z.string().min(1).max(100).describe('A projection name, as `projections.status` lists them') })
  .strict();

/**
 * Rebuilds a read model from the first event into a shadow copy while the live one keeps
 * answering, then swaps it in; answers when it is done. It appends no event.
 */
export const rebuildProjectionOperation = (projections: () => ProjectionRunner) =>
  defineOperation({
    name: 'projections.rebuild',
    title: 'Rebuild a projection',
    description:
      'Rebuilds one read model from the first event beside the live copy, then swaps it in; answers when done.',
    toolset: 'admin',
    scope: 'admin',
    writes: false,
    input: RebuildProjectionInputSchema,
    output: RebuildProgressSchema,
    run: async (input, context) => {
      const names = (await projections().status()).map((s) => s.name);
      if (!names.includes(input.name))
        throw new ValidationError(`No projection named '${input.name}'; projections: ${names.join(', ')}`);
      return projections().rebuild(input.name, context.onProgress ? (progress) => context.onProgress!({ ...progress }) : undefined);
    },
  });
