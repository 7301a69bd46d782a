import type { ChunkDraft, RowRange } from './chunkDraft.js';
import { packRows, paragraphBlocks } from './packRows.js';
import type { SourceText } from './sourceText.js';
import type { ChunkBudget } from './tokenBudget.js';

const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

interface Section extends RowRange {
  /** Headings from the outermost down to this section's own; empty before the first heading. */
  readonly trail: readonly string[];
}

interface MarkdownLine {
  readonly heading: { level: number; title: string } | null;
  readonly inFence: boolean;
}

/** Plain text: paragraphs packed into chunks of kind `text`. */
export const chunkPlainText = (source: SourceText, budget: ChunkBudget): ChunkDraft[] =>
  source.hasContent()
    ? packRows(source, paragraphBlocks(source, 0, source.lastRow), budget, { kind: 'text', symbol: null })
    : [];

/**
 * Markdown: one or more chunks per section (a heading and what follows it up to the next heading),
 * paragraphs packed within the budget. Chunks have kind `section` and, as symbol, the heading trail
 * (`Guide > Install`). A heading with nothing under it joins the section that follows.
 */
export const chunkMarkdown = (source: SourceText, budget: ChunkBudget): ChunkDraft[] => {
  if (!source.hasContent()) return [];
  const lines = classifyLines(source);
  return markdownSections(source, lines).flatMap((section) =>
    packRows(source, sectionBlocks(source, lines, section), budget, {
      kind: 'section',
      symbol: section.trail.length > 0 ? section.trail.join(' > ') : null,
    }),
  );
};

const classifyLines = (source: SourceText): MarkdownLine[] => {
  let fence: string | null = null;
  return source.lines.map((line) => {
    const fenceMarker = FENCE.exec(line)?.[1];
    if (fence !== null) {
      if (fenceMarker !== undefined && fenceMarker[0] === fence[0] && fenceMarker.length >= fence.length)
        fence = null;
      return { heading: null, inFence: true };
    }
    if (fenceMarker) {
      fence = fenceMarker;
      return { heading: null, inFence: true };
    }
    const match = HEADING.exec(line);
    return {
      heading: match ? { level: match[1]?.length ?? 1, title: (match[2] ?? '').trim() } : null,
      inFence: false,
    };
  });
};

const markdownSections = (source: SourceText, lines: readonly MarkdownLine[]): Section[] => {
  const sections: Section[] = [];
  const trail: { level: number; title: string }[] = [];
  let start = 0;
  let sectionTrail: string[] = [];
  let pendingStart: number | null = null;

  const close = (end: number): void => {
    if (end < start || !source.hasContent(start, end)) return;
    const headingOnly = lines[start]?.heading && !source.hasContent(start + 1, end);
    if (headingOnly) pendingStart ??= start;
    else {
      sections.push({ start: pendingStart ?? start, end, trail: sectionTrail });
      pendingStart = null;
    }
  };

  lines.forEach((line, row) => {
    if (!line.heading) return;
    close(row - 1);
    while ((trail[trail.length - 1]?.level ?? 0) >= line.heading.level) trail.pop();
    trail.push(line.heading);
    start = row;
    sectionTrail = trail.map((heading) => heading.title).filter((title) => title !== '');
  });
  close(source.lastRow);
  if (pendingStart !== null) sections.push({ start: pendingStart, end: source.lastRow, trail: sectionTrail });
  return sections;
};

/**
 * Paragraph blocks of a section, except that a fenced code block never splits at its blank lines
 * and headings stay with the paragraph after them.
 */
const sectionBlocks = (source: SourceText, lines: readonly MarkdownLine[], section: Section): RowRange[] => {
  const blocks: RowRange[] = [];
  let blockStart = section.start;
  let blockHasBody = false;
  for (let row = section.start; row <= section.end; row++) {
    const startsParagraph = row > blockStart && !source.isBlank(row) && source.isBlank(row - 1);
    if (startsParagraph && blockHasBody && !lines[row - 1]?.inFence) {
      blocks.push({ start: blockStart, end: row - 1 });
      blockStart = row;
      blockHasBody = false;
    }
    if (!source.isBlank(row) && !lines[row]?.heading) blockHasBody = true;
  }
  blocks.push({ start: blockStart, end: section.end });
  return blocks;
};
