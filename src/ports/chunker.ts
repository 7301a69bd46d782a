import type { Chunk } from '../domain/documents.js';

/** Splits a document into chunks; the same input always gives the same chunks (ids included). */
export interface Chunker {
  chunk(input: { documentId: string; path?: string; contentType: string; body: string }): Promise<Chunk[]>;
  /** The content type a path suggests (`text/markdown`, `text/x-typescript`, …). */
  contentTypeOf(path: string): string;
}
