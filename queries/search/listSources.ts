import { z } from 'zod';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import type { ReadModels } from '../../src/ports/projections.js';

export const SourceSchema = z.object({
  name: z.string(),
  configured: z.boolean(),
  healthy: z.boolean(),
  notes: z.string().nullable(),
  doc_count: z.number().int(),
});
export const ListSourcesOutputSchema = z.object({ sources: z.array(SourceSchema) });
export type ListSourcesOutput = z.infer<typeof ListSourcesOutputSchema>;

/** A configured source and whether it can be read now. */
export interface SourceHealth {
  name: string;
  healthy: boolean;
  notes: string | null;
}

export interface ListSourcesDeps {
  readModels: ReadModels;
  /** The project's configured sources: another tenant's are not listed. */
  configuredSources(project: string): Promise<SourceHealth[]>;
}

/** Configured sources with their health, plus every source documents were ingested from. */
export const listSources = async (deps: ListSourcesDeps, project: string): Promise<ListSourcesOutput> => {
  const configured = await deps.configuredSources(project);
  const counts = await deps.readModels.count('documents', 'source', { project });
  const names = [...new Set([...configured.map((s) => s.name), ...counts.keys()])].sort();
  return {
    sources: names.map((name) => {
      const health = configured.find((s) => s.name === name);
      return {
        name,
        configured: health !== undefined,
        healthy: health?.healthy ?? true,
        notes: health ? health.notes : 'ingested directly, not a configured source',
        doc_count: counts.get(name) ?? 0,
      };
    }),
  };
};

export const listSourcesSurfaces = {
  name: 'sources',
  cli: {
    command: ['sources'],
    description: 'list sources with their health and document counts',
    catchUp: 'documents',
    print: {
      table: {
        rows: 'sources',
        columns: {
          source: '{name}',
          documents: '{doc_count}',
          health: (s: { healthy: boolean }) => (s.healthy ? 'healthy' : 'UNHEALTHY'),
          notes: '{notes}',
        },
        empty: 'No sources.',
      },
    },
  },
} as const satisfies OperationSurfaces;

export const listSourcesOperation = (deps: ListSourcesDeps) =>
  defineOperation({
    ...listSourcesSurfaces,
    title: 'List sources',
    description: 'List the data sources: configured connectors with their health, and document counts.',
    toolset: 'search',
    writes: false,
    input: z.object({}),
    output: ListSourcesOutputSchema,
    run: (_input, context) => listSources(deps, context.project),
    // The tool API's tool: over MCP too, its errors are the tool API's.
    mcpErrors: 'tools',
  });
