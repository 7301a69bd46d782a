import type { ChunkDraft, ChunkLabel, RowRange } from './chunkDraft.js';
import type { SourceText } from './sourceText.js';
import { CHARS_PER_TOKEN, type ChunkBudget } from './tokenBudget.js';

/**
 * Blocks of rows separated by blank lines; each block keeps the blank lines that follow it, so the
 * blocks tile `start..end` exactly.
 */
export const paragraphBlocks = (source: SourceText, start: number, end: number): RowRange[] => {
  const blocks: RowRange[] = [];
  let blockStart = start;
  for (let row = start + 1; row <= end; row++) {
    if (!source.isBlank(row) && source.isBlank(row - 1)) {
      blocks.push({ start: blockStart, end: row - 1 });
      blockStart = row;
    }
  }
  if (start <= end) blocks.push({ start: blockStart, end });
  return blocks;
};

/**
 * Packs consecutive blocks into chunks within the token budget. A block over the budget is cut into
 * line windows, and a single line over it into character slices. A chunk that continues the one
 * before it repeats that chunk's last rows, up to `overlapTokens`.
 */
export const packRows = (
  source: SourceText,
  blocks: readonly RowRange[],
  budget: ChunkBudget,
  label: ChunkLabel,
): ChunkDraft[] => {
  const drafts: ChunkDraft[] = [];
  let current: { start: number; end: number } | null = null;
  let previous: RowRange | null = null;

  const flush = (): void => {
    if (!current) return;
    drafts.push({ ...current, text: source.text(current.start, current.end), ...label, wholeLines: true });
    previous = current;
    current = null;
  };

  for (const block of splitOversizedBlocks(source, blocks, budget.maxTokens)) {
    if (current && source.cost(current.start, block.end) <= budget.maxTokens) {
      current.end = block.end;
      continue;
    }
    flush();
    if (source.cost(block.start, block.end) > budget.maxTokens) {
      drafts.push(...sliceLongLine(source, block.start, budget.maxTokens, label));
      previous = null;
      continue;
    }
    current = { start: overlapStart(source, previous, block, budget), end: block.end };
  }
  flush();
  return drafts;
};

const splitOversizedBlocks = (
  source: SourceText,
  blocks: readonly RowRange[],
  maxTokens: number,
): RowRange[] =>
  blocks.flatMap((block) => {
    if (source.cost(block.start, block.end) <= maxTokens) return [block];
    const rows: RowRange[] = [];
    for (let row = block.start; row <= block.end; row++) rows.push({ start: row, end: row });
    return rows;
  });

/** Where a chunk that starts with `block` begins once the tail of the previous chunk is repeated. */
const overlapStart = (
  source: SourceText,
  previous: RowRange | null,
  block: RowRange,
  budget: ChunkBudget,
): number => {
  if (!previous || previous.end !== block.start - 1 || budget.overlapTokens <= 0) return block.start;
  let start = block.start;
  while (
    start - 1 > previous.start &&
    source.cost(start - 1, previous.end) <= budget.overlapTokens &&
    source.cost(start - 1, block.end) <= budget.maxTokens
  ) {
    start--;
  }
  return source.hasContent(start, block.start - 1) ? start : block.start;
};

const sliceLongLine = (
  source: SourceText,
  row: number,
  maxTokens: number,
  label: ChunkLabel,
): ChunkDraft[] => {
  const line = source.line(row);
  const width = Math.max(1, Math.floor(maxTokens * CHARS_PER_TOKEN));
  const drafts: ChunkDraft[] = [];
  for (let offset = 0; offset < line.length; offset += width) {
    drafts.push({
      start: row,
      end: row,
      text: line.slice(offset, offset + width),
      ...label,
      wholeLines: false,
    });
  }
  return drafts;
};
