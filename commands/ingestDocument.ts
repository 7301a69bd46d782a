import { z } from 'zod';
import {
  evolveDocument,
  initialDocumentState,
  MetadataInputSchema,
  type DocumentEvent,
  type DocumentIngested,
  type DocumentState,
} from '../src/domain/documents.js';
import { streamId } from '../src/domain/events.js';
import { deterministicUuid } from '../src/domain/ids.js';
import { loadAggregateAsOf } from '../src/engine/asOf.js';
import { handleCommand, type CommandContext, type Decider } from '../src/engine/commands.js';
import type { Chunker } from '../src/ports/chunker.js';
import type { ContentStore } from '../src/ports/contentStore.js';
import type { EventStore } from '../src/ports/eventStore.js';
import { parseInput } from '../src/validation.js';

export const IngestDocumentInputSchema = z.object({
  source: z.string().min(1).max(200),
  sourceId: z.string().min(1).max(2000),
  body: z.string(),
  sourceUrl: z.string().nullable().default(null),
  title: z.string().nullable().default(null),
  author: z.string().nullable().default(null),
  createdAt: z.iso.datetime({ offset: true }).optional(),
  updatedAt: z.iso.datetime({ offset: true }).optional(),
  contentType: z.string().min(1).optional(),
  tags: z.array(z.string()).default([]),
  metadata: MetadataInputSchema.default({}),
});
export type IngestDocumentInput = z.input<typeof IngestDocumentInputSchema>;

export type IngestOutcome = 'created' | 'updated' | 'unchanged';

export interface IngestResult {
  documentId: string;
  outcome: IngestOutcome;
  version: number;
  chunks: number;
}

/** The same (project, source, source id) always names the same document stream. */
export const documentIdOf = (project: string, source: string, sourceId: string): string =>
  deterministicUuid('document', project, source, sourceId);

type IngestCommand = { kind: 'ingest'; data: DocumentIngested['data'] };

/** What makes a new version: anything a reader of the document would see change. */
const sameVersion = (a: DocumentIngested['data'], b: DocumentIngested['data']): boolean =>
  a.bodyHash === b.bodyHash &&
  a.title === b.title &&
  a.author === b.author &&
  a.sourceUrl === b.sourceUrl &&
  a.contentType === b.contentType &&
  JSON.stringify(a.tags) === JSON.stringify(b.tags) &&
  JSON.stringify(a.metadata) === JSON.stringify(b.metadata);

export const ingestDecider: Decider<DocumentState, IngestCommand, DocumentEvent> = {
  initialState: initialDocumentState,
  evolve: evolveDocument,
  decide: (command, state) => {
    if (state.current && sameVersion(state.current, command.data)) return [];
    return [{ type: 'DocumentIngested', schemaVersion: 1, data: command.data }];
  },
};

export interface IngestDeps {
  store: EventStore;
  content: ContentStore;
  chunker: Chunker;
}

/**
 * Ingests one document: an unchanged document appends nothing; a changed one appends a new version.
 * The body and chunk texts go to the content store first, so an event never names missing content.
 */
export const ingestDocument = async (
  { store, content, chunker }: IngestDeps,
  rawInput: IngestDocumentInput,
  context: CommandContext,
): Promise<IngestResult> => {
  const input = parseInput(IngestDocumentInputSchema, rawInput);
  const body = input.body;
  const documentId = documentIdOf(context.project, input.source, input.sourceId);
  const stream = streamId('doc', documentId);
  const contentType = input.contentType ?? chunker.contentTypeOf(input.sourceId);
  const [bodyHash] = await content.put([body]);

  const existing = await loadAggregateAsOf(store, stream, ingestDecider);
  const current = existing.state.current;
  const fields = {
    documentId,
    source: input.source,
    sourceId: input.sourceId,
    sourceUrl: input.sourceUrl,
    title: input.title,
    author: input.author,
    createdAt: input.createdAt ?? current?.createdAt ?? input.updatedAt ?? context.now,
    updatedAt: input.updatedAt ?? context.now,
    contentType,
    tags: input.tags,
    metadata: input.metadata,
    bodyHash: bodyHash!,
    bodyBytes: Buffer.byteLength(body),
  };
  if (current && sameVersion(current, { ...fields, chunks: [] })) {
    return { documentId, outcome: 'unchanged', version: existing.state.versions, chunks: current.chunks.length };
  }

  const chunks =
    current && current.bodyHash === bodyHash && current.contentType === contentType
      ? current.chunks
      : await chunkAndStore(chunker, content, { documentId, path: input.sourceId, contentType, body });
  const result = await handleCommand(
    store,
    stream,
    ingestDecider,
    { kind: 'ingest', data: { ...fields, chunks } },
    context,
    { retries: 3 },
  );
  return {
    documentId,
    outcome: result.events.length === 0 ? 'unchanged' : current ? 'updated' : 'created',
    version: result.state.versions,
    chunks: chunks.length,
  };
};

const chunkAndStore = async (
  chunker: Chunker,
  content: ContentStore,
  input: Parameters<Chunker['chunk']>[0],
): Promise<DocumentIngested['data']['chunks']> => {
  const chunks = await chunker.chunk(input);
  const hashes = await content.put(chunks.map((c) => c.text));
  return chunks.map(({ text: _text, ...chunk }, i) => ({ ...chunk, textHash: hashes[i]! }));
};
