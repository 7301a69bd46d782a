import { z } from 'zod';
import type { Stored } from './eventEnvelope.js';
import { deterministicUuid } from './ids.js';
import { valueNestsDeeperThan } from './nesting.js';

const SHA256 = z.string().regex(/^[a-f0-9]{64}$/);

/** A chunk as a chunker produces it. */
export const ChunkSchema = z.object({
  id: z.uuid(),
  index: z.number().int().nonnegative(),
  text: z.string(),
  startLine: z.number().int().positive().nullable(),
  endLine: z.number().int().positive().nullable(),
  /** For code: `function`, `class`, `method`, … or `lines` for a line-window fallback. */
  kind: z.string().nullable(),
  symbol: z.string().nullable(),
});
export type Chunk = z.infer<typeof ChunkSchema>;

/**
 * A chunk as an event records it: its text lives in the content store under `textHash`, so events
 * stay small whatever the document's size, and content can be forgotten without rewriting history.
 */
export const ChunkRefSchema = ChunkSchema.omit({ text: true }).extend({ textHash: SHA256 });
export type ChunkRef = z.infer<typeof ChunkRefSchema>;

/** How deep a document's metadata may nest: room for any real metadata, far from a walker's stack. */
export const MAX_METADATA_DEPTH = 32;

/** A document's metadata as ingest takes it: a JSON object nested at most `MAX_METADATA_DEPTH` deep. */
export const MetadataInputSchema = z
  .record(z.string(), z.unknown())
  .refine((metadata) => !valueNestsDeeperThan(metadata, MAX_METADATA_DEPTH), {
    message: `nested more than ${MAX_METADATA_DEPTH} levels deep`,
    abort: true,
  });

/** Kinds chunkers give to prose (a section, a paragraph run) and to plain windows of lines: no unit of code. */
const TEXT_KINDS: ReadonlySet<string> = new Set(['text', 'section', 'lines']);

/** A function, class, method, … of code, as the chunker found it in the syntax tree. */
export const isCodeUnit = (chunk: Pick<Chunk, 'kind'>) => chunk.kind !== null && !TEXT_KINDS.has(chunk.kind);

/** A chunk's lines as `start-end`, as the REST API writes them; null where it has none. */
export const lineRange = (chunk: Pick<Chunk, 'startLine' | 'endLine'>) =>
  chunk.startLine !== null && chunk.endLine !== null ? `${chunk.startLine}-${chunk.endLine}` : null;

export const DocumentFieldsSchema = z.object({
  source: z.string().min(1),
  sourceId: z.string().min(1),
  sourceUrl: z.string().nullable(),
  title: z.string().nullable(),
  author: z.string().nullable(),
  createdAt: z.iso.datetime({ offset: true }),
  updatedAt: z.iso.datetime({ offset: true }),
  contentType: z.string().min(1),
  tags: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()),
});
export type DocumentFields = z.infer<typeof DocumentFieldsSchema>;

export const DocumentIngestedSchema = z.object({
  type: z.literal('DocumentIngested'),
  schemaVersion: z.literal(1),
  data: DocumentFieldsSchema.extend({
    documentId: z.uuid(),
    /** sha256 of the body; the body itself lives in the content store. */
    bodyHash: SHA256,
    bodyBytes: z.number().int().nonnegative(),
    chunks: z.array(ChunkRefSchema),
  }),
});
export type DocumentIngested = z.infer<typeof DocumentIngestedSchema>;

export const DocumentRemovedSchema = z.object({
  type: z.literal('DocumentRemoved'),
  schemaVersion: z.literal(1),
  data: z.object({
    documentId: z.uuid(),
    reason: z.string().nullable(),
  }),
});

/**
 * The content of every version so far (body, chunk texts and what was derived from them) was
 * erased; who asked is in the metadata. The document's fields stay in the history.
 */
export const DocumentForgottenSchema = z.object({
  type: z.literal('DocumentForgotten'),
  schemaVersion: z.literal(1),
  data: z.object({
    documentId: z.uuid(),
    reason: z.string().nullable(),
    versions: z.number().int().positive(),
  }),
});

export const DocumentEventSchemas = [
  DocumentIngestedSchema,
  DocumentRemovedSchema,
  DocumentForgottenSchema,
] as const;
export type DocumentEvent = z.infer<(typeof DocumentEventSchemas)[number]>;

/** A document aggregate: its latest version, or nothing when never ingested, removed or forgotten. */
export interface DocumentState {
  current: DocumentIngested['data'] | null;
  versions: number;
  /** Forgotten, and not ingested again since. */
  forgotten: boolean;
}

export const initialDocumentState = (): DocumentState => ({ current: null, versions: 0, forgotten: false });

export const evolveDocument = (state: DocumentState, event: Stored<DocumentEvent>): DocumentState => {
  switch (event.type) {
    case 'DocumentIngested':
      return { current: event.data, versions: state.versions + 1, forgotten: false };
    case 'DocumentRemoved':
      return { ...state, current: null };
    case 'DocumentForgotten':
      return { ...state, current: null, forgotten: true };
  }
};

/** The same (project, source, source id) always names the same document stream. */
export const documentIdOf = (project: string, source: string, sourceId: string): string =>
  deterministicUuid('document', project, source, sourceId);
