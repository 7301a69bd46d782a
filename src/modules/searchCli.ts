import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { GetDocumentOutput } from '../../queries/getDocument.js';
import type { ListSourcesOutput } from '../../queries/listSources.js';
import type { SearchOutput } from '../../queries/searchDocuments.js';
import { print } from '../cli/output.js';
import { progressLine } from '../cli/progress.js';
import { ValidationError } from '../errors.js';
import type { IngestTally } from '../ingestion/ingestFiles.js';
import type { WithLedger } from '../module.js';

const summary = (t: IngestTally) =>
  `${t.scanned} files: ${t.created} new, ${t.updated} updated, ${t.unchanged} unchanged, ${t.skipped} skipped, ` +
  `${t.failed} failed, ${t.removed} removed; ${t.chunks} chunks`;

/** Parses JSONL: one document per line; a bad line is reported with its number. */
const readJsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .map((line, i) => ({ line: line.trim(), number: i + 1 }))
    .filter(({ line }) => line.length > 0)
    .map(({ line, number }) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
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
      if (options.json) print(JSON.stringify(result, null, 2));
      else if ('results' in (result as object)) print(`ingested ${(result as { results: unknown[] }).results.length} documents`);
      else {
        const tally = result as IngestTally;
        print(summary(tally));
        for (const p of tally.problems.slice(0, 20)) print(`  ${p.sourceId}: ${p.reason}`);
        if (tally.problems.length > 20) print(`  … and ${tally.problems.length - 20} more`);
      }
    });

  program
    .command('search')
    .description('search the index')
    .argument('<query...>', 'what to look for')
    .option('--mode <mode>', 'keyword, semantic or hybrid', 'keyword')
    .option('--limit <n>', 'maximum results', (v) => Number(v))
    .option('--source <name>', 'only this source')
    .option('--tag <tag...>', 'only documents with these tags')
    .option('--since <iso>', 'only documents updated since')
    .option('--until <iso>', 'only documents updated until')
    .option('--explain', 'show component scores')
    .option('--as-of <position|iso>', 'search as it would have answered then: a position from `ctx history`, or a time')
    .option('--json', 'print JSON')
    .action(async (words: string[], options: Record<string, unknown>, command: Command) => {
      const output = await withLedger(command, async (ledger) => {
        const asOf = options.asOf as string | undefined;
        // As of a past position, the indexes are built from the events: the live ones need not catch up.
        if (asOf === undefined) await ledger.catchUp();
        const progress = progressLine();
        const found = await ledger.run<SearchOutput>(
          'search',
          {
            query: words.join(' '),
            mode: options.mode,
            limit: options.limit,
            explain: options.explain === true,
            filters: { source: options.source, tags: options.tag, since: options.since, until: options.until },
            asOf,
          },
          {
            onProgress: (p) =>
              progress.update(`building the ${String(p.model)} index as of ${String(p.position)}: ${String(p.processedEvents)} events`),
          },
        );
        progress.done();
        return found;
      });
      if (options.json) return print(JSON.stringify(output, null, 2));
      if (output.results.length === 0) return print('No results.');
      print(
        output.results
          .map((r, i) => `${i + 1}. ${r.title ?? r.source_id}  (${r.source}:${r.source_id}, ${r.score.toFixed(3)})\n   id ${r.id}\n   ${r.snippet}`)
          .join('\n'),
      );
    });

  program
    .command('get')
    .description('print a document by id')
    .argument('<id>', 'document id')
    .option('--json', 'print JSON with chunks')
    .option('--as-of <position|iso>', 'which version it was then, and its chunk ids (JSON)')
    .action(async (id: string, options: { json?: boolean; asOf?: string }, command: Command) => {
      if (options.asOf !== undefined) {
        const version = await withLedger(command, (ledger) => ledger.run('document_as_of', { id, as_of: options.asOf }));
        return print(JSON.stringify(version, null, 2));
      }
      const doc = await withLedger(command, async (ledger) => {
        await ledger.catchUp();
        return ledger.run<GetDocumentOutput>('get', { id });
      });
      print(options.json ? JSON.stringify(doc, null, 2) : `# ${doc.title ?? doc.source_id}\n${doc.source}:${doc.source_id}\n\n${doc.body}`);
    });

  program
    .command('sources')
    .description('list sources with their health and document counts')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      const { sources } = await withLedger(command, async (ledger) => {
        await ledger.catchUp();
        return ledger.run<ListSourcesOutput>('sources', {});
      });
      if (options.json) return print(JSON.stringify({ sources }, null, 2));
      print(
        sources.length === 0
          ? 'No sources.'
          : sources
              .map((s) => `${s.name}  ${s.doc_count} documents  ${s.healthy ? 'healthy' : 'UNHEALTHY'}${s.notes ? `  (${s.notes})` : ''}`)
              .join('\n'),
      );
    });
};
