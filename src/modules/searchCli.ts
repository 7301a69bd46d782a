import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { GetDocumentOutput } from '../../queries/getDocument.js';
import type { DocumentVersion } from '../domain/documentVersion.js';
import { fields } from '../cli/format.js';
import { printResult } from '../cli/output.js';
import { progressLine } from '../cli/progress.js';
import { toStorableText } from '../domain/text.js';
import { ValidationError } from '../errors.js';
import type { IngestTally } from '../domain/ingestTally.js';
import type { WithLedger } from '../module.js';

const summary = (t: IngestTally) =>
  `${t.scanned} files: ${t.created} new, ${t.updated} updated, ${t.unchanged} unchanged, ${t.skipped} skipped, ` +
  `${t.failed} failed, ${t.removed} removed; ${t.chunks} chunks`;

const versionText = (v: DocumentVersion) =>
  fields({
    document: v.id,
    title: v.title,
    source: v.source && `${v.source}:${v.source_id}`,
    version: `${v.version} (stream revision ${v.revision})`,
    state: v.forgotten ? 'forgotten' : v.removed ? 'removed' : 'present',
    'content hash': v.content_hash,
    updated: v.updated_at,
    chunks: v.chunk_ids,
  });

const ingestText = (result: unknown): string => {
  if ('results' in (result as object)) return `ingested ${(result as { results: unknown[] }).results.length} documents`;
  const tally = result as IngestTally;
  return [
    summary(tally),
    ...tally.problems.slice(0, 20).map((p) => `  ${p.sourceId}: ${p.reason}`),
    ...(tally.problems.length > 20 ? [`  … and ${tally.problems.length - 20} more`] : []),
  ].join('\n');
};

/**
 * Parses JSONL: one document per line; a bad line is reported with its number. Text the ledger
 * cannot store (NUL, unpaired surrogates) is replaced by U+FFFD, as in files read from disk.
 */
const readJsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .map((line, i) => ({ line: line.trim(), number: i + 1 }))
    .filter(({ line }) => line.length > 0)
    .map(({ line, number }) => {
      try {
        return toStorableText(JSON.parse(line) as Record<string, unknown>);
      } catch (error) {
        throw new ValidationError(`${file}:${number}: not JSON (${(error as Error).message})`);
      }
    });

export const searchCli = (program: Command, withLedger: WithLedger) => {
  program
    .command('ingest')
    .description('ingest files and folders, a configured source, or a JSONL file of documents')
    .argument('[paths...]', 'files or folders')
    .option('--source <name>', 'a configured source (e.g. git:platform), or the source name for paths / --jsonl')
    .option('--jsonl <file>', 'one JSON document per line: source_id, title, body, tags, updated_at, metadata')
    .option('--include <glob...>', 'only paths matching these globs')
    .option('--exclude <glob...>', 'skip paths matching these globs')
    .option('--json', 'print the result as JSON')
    .action(async (paths: string[], options: Record<string, unknown>, command: Command) => {
      const result = await withLedger(command, async (ledger) => {
        const progress = progressLine();
        // A server reports no progress: the line says where the work runs until the summary.
        if (ledger.server) progress.update(`ingesting through ${ledger.server}…`);
        let outcome: unknown;
        if (options.jsonl) {
          if (!options.source) throw new ValidationError('--jsonl needs --source <name>');
          const documents = readJsonl(options.jsonl as string);
          outcome = await ledger.run('ingest_documents', { source: options.source, documents }, {
            onProgress: (p) => progress.update(`ingesting ${String(p.done)}/${String(p.total)} documents`),
          });
        } else {
          // Paths and source ids are this directory's, wherever the files are read.
          const cwd = process.cwd();
          outcome = await ledger.run<IngestTally>(
            'ingest',
            {
              paths: paths.map((p) => path.resolve(cwd, p)),
              base_dir: cwd,
              source: options.source,
              include: options.include,
              exclude: options.exclude,
            },
            { onProgress: (t) => progress.update(summary(t as IngestTally)) },
          );
        }
        progress.update('indexing…');
        await ledger.catchUp();
        progress.done();
        return outcome;
      });
      printResult(result, options.json as boolean | undefined, ingestText);
    });

  program
    .command('get')
    .description('print a document by id')
    .argument('<id>', 'document id')
    .option('--json', 'print JSON with chunks')
    .option('--as-of <position|iso>', 'which version it was then, and its chunk ids')
    .action(async (id: string, options: { json?: boolean; asOf?: string }, command: Command) => {
      if (options.asOf !== undefined) {
        const version = await withLedger(command, (ledger) => ledger.run<DocumentVersion>('document_as_of', { id, as_of: options.asOf }));
        return printResult(version, options.json, versionText);
      }
      const doc = await withLedger(command, async (ledger) => {
        await ledger.catchUp();
        return ledger.run<GetDocumentOutput>('get', { id });
      });
      printResult(doc, options.json, (d) => `# ${d.title ?? d.source_id}\n${d.source}:${d.source_id}\n\n${d.body}`);
    });
};
