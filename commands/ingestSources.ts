import { z } from 'zod';
import { IngestTallySchema, type IngestTally } from '../src/domain/ingestTally.js';
import { defineOperation, type OperationContext } from '../src/operations.js';

export const IngestInputSchema = z
  .object({
    paths: z
      .array(z.string().min(1))
      .optional()
      .describe('Files or folders to ingest, relative to `base_dir`, inside the folders the server’s `ingest.roots` setting names'),
    base_dir: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The folder that relative paths and the documents’ source ids are taken from (default: the server’s working directory)',
      ),
    source: z
      .string()
      .min(1)
      .optional()
      .describe('A configured source to ingest (e.g. `git:platform`), or the source name for `paths` (default `filesystem`)'),
    include: z.array(z.string()).optional().describe('Only paths matching these globs'),
    exclude: z.array(z.string()).optional().describe('Skip paths matching these globs'),
  })
  .refine((input) => (input.paths?.length ?? 0) > 0 || input.source !== undefined, {
    message: 'give paths to ingest, or the name of a configured source',
  });
export type IngestInput = z.infer<typeof IngestInputSchema>;

export const ingestOperation = (run: (input: IngestInput, context: OperationContext) => Promise<IngestTally>) =>
  defineOperation({
    name: 'ingest',
    title: 'Ingest files',
    description:
      'Ingest files and folders (Markdown, text and code) or a configured source into the index. Unchanged files ' +
      'append nothing; files no longer present in a configured source are removed from the index.',
    toolset: 'search',
    writes: true,
    scope: 'index:write',
    input: IngestInputSchema,
    output: IngestTallySchema,
    run,
  });
