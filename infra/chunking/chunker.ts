import type { Chunker } from '../../src/ports/chunker.js';
import { chunkDocument } from './chunkDocument.js';
import { detectContentType } from './contentTypes.js';

/** Markdown and text by headings and paragraphs, code by syntax tree (tree-sitter). */
export const treeSitterChunker: Chunker = {
  chunk: (input) => chunkDocument(input),
  contentTypeOf: detectContentType,
};
