import type { ChunkDraft } from './chunkDraft.js';
import type { SourceText } from './sourceText.js';

/**
 * Gives every row to some chunk. Chunkers leave out runs of blank lines and closing brackets
 * between chunks; such a run joins the chunk before it (or, at the top, the chunk after it).
 * Drafts must be in document order.
 */
export const coverAllRows = (source: SourceText, drafts: readonly ChunkDraft[]): ChunkDraft[] => {
  const covered: ChunkDraft[] = [];
  let coveredTo = -1;
  const extend = (draft: ChunkDraft, start: number, end: number): void => {
    draft.start = start;
    draft.end = end;
    draft.text = source.text(start, end);
  };
  const fill = (start: number, end: number, next: ChunkDraft | undefined): void => {
    const last = covered[covered.length - 1];
    if (last?.wholeLines && last.end === start - 1) extend(last, last.start, end);
    else if (next?.wholeLines) extend(next, start, next.end);
    else
      covered.push({
        start,
        end,
        text: source.text(start, end),
        kind: 'lines',
        symbol: null,
        wholeLines: true,
      });
  };

  for (const original of drafts) {
    const draft = { ...original };
    if (draft.start > coveredTo + 1) fill(coveredTo + 1, draft.start - 1, draft);
    covered.push(draft);
    coveredTo = Math.max(coveredTo, draft.end);
  }
  if (covered.length > 0 && coveredTo < source.lastRow) fill(coveredTo + 1, source.lastRow, undefined);
  return covered;
};
