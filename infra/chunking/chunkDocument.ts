import { deterministicUuid } from '../../src/domain/ids.js';
import type { Chunk } from '../../src/domain/documents.js';
import { chunkCode } from './chunkCode.js';
import type { ChunkDraft } from './chunkDraft.js';
import { essenceOf, languageOf, languageOfContentType } from './contentTypes.js';
import { coverAllRows } from './coverAllRows.js';
import { chunkMarkdown, chunkPlainText } from './chunkProse.js';
import { packRows, paragraphBlocks } from './packRows.js';
import { SourceText } from './sourceText.js';
import { DEFAULT_BUDGET, type ChunkBudget } from './tokenBudget.js';

export interface ChunkDocumentInput {
  readonly documentId: string;
  readonly path?: string;
  readonly contentType: string;
  readonly body: string;
}

export interface ChunkOptions {
  readonly maxTokens?: number;
  readonly overlapTokens?: number;
}

/**
 * Cuts a document into chunks: markdown by headings then paragraphs, code by declarations
 * (tree-sitter), anything else by paragraphs. Every non-empty document's rows are all covered;
 * line numbers are 1-based and inclusive. The same input always gives the same chunks and ids.
 */
export const chunkDocument = async (
  input: ChunkDocumentInput,
  options: ChunkOptions = {},
): Promise<Chunk[]> => {
  const budget = budgetOf(options);
  const source = new SourceText(input.body);
  if (!source.hasContent()) return [];
  const drafts = coverAllRows(source, await draftsFor(input, source, budget));
  return drafts.map((draft, index) => ({
    id: deterministicUuid(input.documentId, String(index), draft.text),
    index,
    text: draft.text,
    startLine: draft.start + 1,
    endLine: draft.end + 1,
    kind: draft.kind,
    symbol: draft.symbol,
  }));
};

const draftsFor = async (
  input: ChunkDocumentInput,
  source: SourceText,
  budget: ChunkBudget,
): Promise<ChunkDraft[]> => {
  const contentType = essenceOf(input.contentType);
  if (contentType === 'text/markdown') return chunkMarkdown(source, budget);
  const language = languageOfContentType(contentType) ?? (input.path ? languageOf(input.path) : null);
  if (language) {
    const drafts = await chunkCode(source, language, budget);
    if (drafts) return drafts;
  }
  if (PROSE.has(contentType)) return chunkPlainText(source, budget);
  return packRows(source, paragraphBlocks(source, 0, source.lastRow), budget, {
    kind: 'lines',
    symbol: null,
  });
};

const PROSE = new Set(['text/plain', 'text/x-rst', 'text/asciidoc']);

const budgetOf = (options: ChunkOptions): ChunkBudget => {
  const maxTokens = Math.max(1, options.maxTokens ?? DEFAULT_BUDGET.maxTokens);
  const overlapTokens = Math.min(
    Math.max(0, options.overlapTokens ?? DEFAULT_BUDGET.overlapTokens),
    maxTokens / 2,
  );
  return { maxTokens, overlapTokens };
};
