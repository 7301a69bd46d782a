import { z } from 'zod';
import { callOperation, defineOperation, type Operation } from '../../src/operations.js';

const IndexControlInputSchema = z.object({
  action: z.enum(['start', 'stop', 'status', 'force_reindex']),
  connectors: z.array(z.string().min(1).max(200)).max(50).optional(),
});

/** The MCP tool over the index operations the REST API serves. */
export const controlIndexOperation = (index: Readonly<Record<'start' | 'stop' | 'status', Operation>>) =>
  defineOperation({
    name: 'context.index_control',
    title: 'Index control',
    description: "Control indexing of the project's connectors: start, stop, status or force_reindex.",
    toolset: 'jobs',
    writes: true,
    scope: 'index:read',
    writeScope: 'index:write',
    onlyReads: ({ action }) => action === 'status',
    input: IndexControlInputSchema,
    output: z.object({ action: z.string(), result: z.unknown() }),
    run: async ({ action, connectors }, context) => {
      if (action === 'status') return { action, result: await callOperation(index.status, {}, context, { onBehalf: true }) };
      if (action === 'stop') return { action, result: await callOperation(index.stop, {}, context, { onBehalf: true }) };
      const force_full_reindex = action === 'force_reindex';
      return { action, result: await callOperation(index.start, { connectors, force_full_reindex }, context, { onBehalf: true }) };
    },
  });
