import { ValidationError } from '../../src/errors.js';
import { z } from 'zod';
import { formatDuration, formatRebuildProgress } from '../../src/engine/rebuildText.js';
import { RebuildProgressSchema, type ProjectionRunner, type RebuildProgress } from '../../src/engine/projectionRunner.js';
import { defineOperation, type OperationSurfaces, type RouteSurfaces } from '../../src/operations.js';

export const RebuildProjectionInputSchema = z
  .object({ name: z.string().min(1).max(100).describe('A projection name, as `projections.status` lists them') })
  .strict();

/** What the operation answers: the rebuild's last progress. */
type Rebuild = z.output<typeof RebuildProgressSchema>;
type Rebuilt = Rebuild & { name: string };

export const rebuildProjectionSurfaces = {
  name: 'projections.rebuild',
  cli: {
    command: ['projections', 'rebuild'],
    description: 'rebuild a projection from the first event into a shadow copy, then swap it in',
    arguments: [{ name: 'name', field: 'name', description: 'projection name (see `ctx projections status`)' }],
    progress: (progress: RebuildProgress, { name }: { name: string }) => `rebuilding ${name}: ${formatRebuildProgress(progress)}`,
    shown: (output: Rebuild, { name }: { name: string }): Rebuilt => ({ name, ...output }),
    print: {
      line: (r: Rebuilt) =>
        `rebuilt ${r.name} from ${r.processedEvents} events in ${formatDuration((Date.now() - Date.parse(r.startedAt)) / 1000)}`,
    },
  },
} as const satisfies OperationSurfaces;

/**
 * Rebuilds a read model from the first event into a shadow copy while the live one keeps
 * answering, then swaps it in; answers when it is done. It appends no event.
 */
export const rebuildProjectionOperation = (projections: () => ProjectionRunner) =>
  defineOperation({
    ...rebuildProjectionSurfaces,
    title: 'Rebuild a projection',
    description:
      'Rebuilds one read model from the first event beside the live copy, then swaps it in; answers when done.',
    toolset: 'admin',
    scope: 'admin',
    writes: false,
    input: RebuildProjectionInputSchema,
    operatorOnly: true,
    output: RebuildProgressSchema,
    run: async (input, context) => {
      const names = (await projections().status()).map((s) => s.name);
      if (!names.includes(input.name))
        throw new ValidationError(`No projection named '${input.name}'; projections: ${names.join(', ')}`);
      return projections().rebuild(input.name, context.onProgress ? (progress) => context.onProgress!({ ...progress }) : undefined);
    },
  });

export const startRebuildSurfaces = {
  name: 'projections.start_rebuild',
  tool: false,
  toolset: 'admin',
  scope: 'admin',
  writes: false,
  input: z.object({ name: z.string().min(1).max(100) }),
  output: z.object({ name: z.string(), state: z.literal('rebuilding') }),
  rest: {
    method: 'POST',
    path: '/projections/{name}/rebuild',
    summary: 'Rebuild a read model beside the live one, then swap it in (409 while one runs)',
    status: 202,
  },
} as const satisfies RouteSurfaces;

/** Starts a rebuild and answers at once; the runner records how it ends (`projections.status` shows it). */
export const startRebuildOperation = (projections: () => ProjectionRunner) =>
  defineOperation({
    ...startRebuildSurfaces,
    operatorOnly: true,
    title: 'Start rebuilding a projection',
    description: 'Starts rebuilding one read model beside the live copy and answers at once.',
    run: (input) => {
      // Throws at once for an unknown name or a rebuild already running.
      projections()
        .startRebuild(input.name)
        .catch(() => undefined);
      return Promise.resolve({ name: input.name, state: 'rebuilding' as const });
    },
  });
