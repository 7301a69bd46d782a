import path from 'node:path';
import type { GitFile, ScannedFile, SkippedFile } from '../../infra/connectors/index.js';
import { ingestDocument, type IngestDeps } from '../../commands/search/ingestDocument.js';
import { removeDocument } from '../../commands/search/removeDocument.js';
import type { DocumentView } from '../domain/documentView.js';
import type { IngestTally } from '../domain/ingestTally.js';
import type { CommandContext } from '../engine/commands.js';
import type { ReadModels } from '../ports/projections.js';

export const emptyTally = (): IngestTally => ({
  scanned: 0,
  created: 0,
  updated: 0,
  unchanged: 0,
  skipped: 0,
  failed: 0,
  removed: 0,
  chunks: 0,
  problems: [],
});

export interface IngestFilesOptions {
  source: string;
  /** The context of every write, or a function giving a fresh one for each (a long run stamps each write with its own time). */
  context: CommandContext | (() => CommandContext);
  /** Remove documents of this source that the scan no longer found (only after a complete scan). */
  removeMissing?: { readModels: ReadModels; beforeRemoval?: () => Promise<void> };
  onProgress?: (tally: IngestTally) => void | Promise<void>;
  /** Checked between files and removals: stop early when it returns true (or throws). A file a stop interrupts is not counted as failed. */
  shouldStop?: () => boolean;
  /** Runs each write (a file's ingestion, a removal, the lookup before removals): a job waits out outages here. */
  attempt?: <T>(work: () => Promise<T>) => Promise<T>;
  /** Added to every document's metadata. */
  metadata?: Record<string, unknown>;
}

const isGitFile = (file: ScannedFile): file is GitFile => 'commit' in file;

/**
 * Gives the event loop a turn: the embedded database answers without one, so a loop of writes
 * would otherwise hold every request until it ends.
 */
export const letRequestsIn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Ingests what a connector yields, one file at a time, giving requests a turn between files; a
 * file that fails is counted and reported, never the end of the run. Unchanged files append
 * nothing. The one ingestion loop: the CLI, the ingest operations and indexing jobs all run it.
 */
export const ingestFiles = async (
  deps: IngestDeps,
  files: AsyncIterable<ScannedFile | SkippedFile>,
  { source, context, removeMissing, onProgress, shouldStop, attempt = (work) => work(), metadata = {} }: IngestFilesOptions,
): Promise<IngestTally> => {
  const contextNow = typeof context === 'function' ? context : () => context;
  const tally = emptyTally();
  const seen = new Set<string>();
  let complete = true;
  for await (const file of files) {
    if (shouldStop?.()) {
      complete = false;
      break;
    }
    tally.scanned++;
    seen.add(file.sourceId);
    if (file.status === 'skipped') {
      tally.skipped++;
      tally.problems.push({ sourceId: file.sourceId, reason: file.detail ? `${file.reason}: ${file.detail}` : file.reason });
    } else {
      try {
        const result = await attempt(() => ingestDocument(
          deps,
          {
            source,
            sourceId: file.sourceId,
            body: file.body,
            title: path.posix.basename(file.sourceId),
            contentType: file.contentType,
            updatedAt: isGitFile(file) ? file.updatedAt : file.modifiedAt,
            author: isGitFile(file) ? file.author : null,
            sourceUrl: isGitFile(file) ? file.sourceUrl : null,
            metadata: { path: file.sourceId, bytes: file.bytes, ...metadata },
          },
          contextNow(),
        ));
        tally[result.outcome]++;
        tally.chunks += result.chunks;
      } catch (error) {
        if (shouldStop?.()) {
          complete = false;
          break;
        }
        tally.failed++;
        tally.problems.push({ sourceId: file.sourceId, reason: (error as Error).message });
      }
    }
    await onProgress?.(tally);
    await letRequestsIn();
  }
  if (removeMissing && complete) {
    await removeMissing.beforeRemoval?.();
    const { project } = contextNow();
    const { items } = await attempt(() =>
      removeMissing.readModels.find<DocumentView>('documents', { where: { source, project }, limit: 1_000_000 }),
    );
    for (const doc of items.filter((d) => !seen.has(d.sourceId))) {
      if (shouldStop?.()) break;
      await attempt(() => removeDocument(deps.store, { documentId: doc.id, reason: 'no longer in its source' }, contextNow()));
      tally.removed++;
      await onProgress?.(tally);
      await letRequestsIn();
    }
  }
  return tally;
};
