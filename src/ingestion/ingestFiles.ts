import path from 'node:path';
import { z } from 'zod';
import type { GitFile, ScannedFile, SkippedFile } from '../../infra/connectors/index.js';
import { ingestDocument, type IngestDeps } from '../../commands/ingestDocument.js';
import { removeDocument } from '../../commands/removeDocument.js';
import type { DocumentView } from '../domain/documentView.js';
import type { CommandContext } from '../engine/commands.js';
import type { ReadModels } from '../ports/projections.js';

export const IngestTallySchema = z.object({
  scanned: z.number().int(),
  created: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
  skipped: z.number().int(),
  failed: z.number().int(),
  removed: z.number().int(),
  chunks: z.number().int(),
  /** Files that were skipped or failed, with why. */
  problems: z.array(z.object({ sourceId: z.string(), reason: z.string() })),
});
export type IngestTally = z.infer<typeof IngestTallySchema>;

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
  context: CommandContext;
  /** Remove documents of this source that the scan no longer found (only after a complete scan). */
  removeMissing?: { readModels: ReadModels; beforeRemoval?: () => Promise<void> };
  onProgress?: (tally: IngestTally) => void;
  /** Checked between files: stop early when it returns true. */
  shouldStop?: () => boolean;
}

const isGitFile = (file: ScannedFile): file is GitFile => 'commit' in file;

/**
 * Ingests what a connector yields, one file at a time; a file that fails is counted and reported,
 * never the end of the run. Unchanged files append nothing.
 */
export const ingestFiles = async (
  deps: IngestDeps,
  files: AsyncIterable<ScannedFile | SkippedFile>,
  { source, context, removeMissing, onProgress, shouldStop }: IngestFilesOptions,
): Promise<IngestTally> => {
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
        const result = await ingestDocument(
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
            metadata: { path: file.sourceId, bytes: file.bytes },
          },
          context,
        );
        tally[result.outcome]++;
        tally.chunks += result.chunks;
      } catch (error) {
        tally.failed++;
        tally.problems.push({ sourceId: file.sourceId, reason: (error as Error).message });
      }
    }
    onProgress?.(tally);
  }
  if (removeMissing && complete) {
    await removeMissing.beforeRemoval?.();
    const { items } = await removeMissing.readModels.find<DocumentView>('documents', {
      where: { source, project: context.project },
      limit: 1_000_000,
    });
    for (const doc of items.filter((d) => !seen.has(d.sourceId))) {
      await removeDocument(deps.store, { documentId: doc.id, reason: 'no longer in its source' }, context);
      tally.removed++;
      onProgress?.(tally);
    }
  }
  return tally;
};
