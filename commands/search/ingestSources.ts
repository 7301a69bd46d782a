import path from 'node:path';
import { z } from 'zod';
import { IngestTallySchema, type IngestTally } from '../../src/domain/ingestTally.js';
import { defineOperation, type OperationContext, type OperationSurfaces } from '../../src/operations.js';

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

const summary = (t: IngestTally) =>
  `${t.scanned} files: ${t.created} new, ${t.updated} updated, ${t.unchanged} unchanged, ${t.skipped} skipped, ` +
  `${t.failed} failed, ${t.removed} removed; ${t.chunks} chunks`;

const SHOWN_PROBLEMS = 20;

/** What a JSONL file's batches did, counted by outcome, and the documents that failed with why. */
const batchSummary = ({ results }: { results: { source_id: string; outcome: string; error?: string }[] }) => {
  const count = (outcome: string) => results.filter((r) => r.outcome === outcome).length;
  const failed = results.filter((r) => r.outcome === 'failed');
  return [
    `ingested ${results.length} documents: ${count('created')} new, ${count('updated')} updated, ${count('unchanged')} unchanged` +
      (failed.length ? `, ${failed.length} failed` : ''),
    ...failed.slice(0, SHOWN_PROBLEMS).map((r) => `  ${r.source_id}: ${r.error ?? 'failed'}`),
    ...(failed.length > SHOWN_PROBLEMS ? [`  … and ${failed.length - SHOWN_PROBLEMS} more`] : []),
  ].join('\n');
};

const tallyText = (tally: IngestTally) =>
  [
    summary(tally),
    ...tally.problems.slice(0, SHOWN_PROBLEMS).map((p) => `  ${p.sourceId}: ${p.reason}`),
    ...(tally.problems.length > SHOWN_PROBLEMS ? [`  … and ${tally.problems.length - SHOWN_PROBLEMS} more`] : []),
    ...(tally.settling ? [tally.settling.message] : []),
  ].join('\n');

export const ingestSurfaces = {
  name: 'documents.ingest',
  cli: {
    command: ['ingest'],
    description: 'ingest files and folders, a configured source, or a JSONL file of documents',
    arguments: [{ name: 'paths', field: 'paths', description: 'files or folders', optional: true, variadic: true }],
    options: [
      {
        flags: '--source <name>',
        field: 'source',
        description: 'a configured source (e.g. git:platform), or the source name for paths / --jsonl',
      },
      {
        flags: '--jsonl <file>',
        field: 'documents',
        description: 'one JSON document per line: source_id, title, body, tags, updated_at, metadata (plain or gzipped; - reads standard input)',
        parse: 'jsonl-file',
        runs: 'documents.ingest_batch',
        needs: ['source'],
        shows: {
          progress: (p: { done: number; total: number | null }) =>
            `ingesting ${p.done}${p.total === null ? '' : `/${p.total}`} documents`,
          settles: true,
          // A file of no lines runs no batch; its answer still lists its (no) results.
          shown: (answer: object) => ({ results: [], ...answer }),
          print: { line: batchSummary },
        },
      },
      { flags: '--include <glob...>', field: 'include', description: 'only paths matching these globs' },
      { flags: '--exclude <glob...>', field: 'exclude', description: 'skip paths matching these globs' },
    ],
    // Paths and source ids are the working directory's, wherever the files are read.
    prepare: (input) => ({
      ...input,
      paths: ((input.paths as string[] | undefined) ?? []).map((p) => path.resolve(p)),
      base_dir: process.cwd(),
    }),
    progress: summary,
    settles: true,
    print: { line: tallyText },
  },
} as const satisfies OperationSurfaces;

export const ingestOperation = (run: (input: IngestInput, context: OperationContext) => Promise<IngestTally>) =>
  defineOperation({
    ...ingestSurfaces,
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
