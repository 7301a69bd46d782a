import { z } from 'zod';
import { Instant } from '../../src/domain/instant.js';
import {
  documentIdOf,
  evolveDocument,
  initialDocumentState,
  MetadataInputSchema,
  type DocumentEvent,
  type DocumentIngested,
  type DocumentState,
} from '../../src/domain/documents.js';
import { streamId } from '../../src/domain/events.js';
import { contentHash } from '../../src/domain/ids.js';
import { loadAggregateAsOf, loadAggregates } from '../../src/engine/asOf.js';
import {
  runCommand,
  type CommandContext,
  type Decider,
  type Decision,
  type LoadedState,
} from '../../src/engine/commands.js';
import type { Chunker } from '../../src/ports/chunker.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { parseInput } from '../../src/validation.js';

export const IngestDocumentInputSchema = z.object({
  source: z.string().min(1).max(200),
  sourceId: z.string().min(1).max(2000),
  body: z.string(),
  sourceUrl: z.string().nullable().default(null),
  title: z.string().nullable().default(null),
  author: z.string().nullable().default(null),
  createdAt: Instant.optional(),
  updatedAt: Instant.optional(),
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

/** One document's answer in a batch: what it became, or why it failed (the others go on). */
export type IngestSettled = PromiseSettledResult<IngestResult>;

/**
 * Ingests one document: an unchanged document appends nothing; a changed one appends a new version.
 * A batch of one.
 */
export const ingestDocument = async (
  deps: IngestDeps,
  rawInput: IngestDocumentInput,
  context: CommandContext,
): Promise<IngestResult> => {
  const [settled] = await ingestDocuments(deps, [rawInput], context);
  if (settled!.status === 'rejected') throw settled!.reason;
  return settled!.value;
};

/**
 * Ingests documents together, sharing database round trips: their streams are loaded in one read,
 * and the bodies and chunk texts of the versions they make stored in one write; their appends go
 * through the command handler at once, so that the event store writes them together. An unchanged
 * document costs its share of the read only. An input that does not parse fails the whole batch
 * before anything is written; after that each document is stored or fails alone, and its answer
 * says which. The body and chunk texts go to the content store first, so an event never names
 * missing content.
 */
export const ingestDocuments = async (
  { store, content, chunker }: IngestDeps,
  rawInputs: readonly IngestDocumentInput[],
  context: CommandContext,
): Promise<IngestSettled[]> => {
  const inputs = rawInputs.map((raw) => parseInput(IngestDocumentInputSchema, raw));
  const planned = inputs.map((input) => {
    const documentId = documentIdOf(context.project, input.source, input.sourceId);
    return {
      input,
      documentId,
      stream: streamId('doc', documentId),
      contentType: input.contentType ?? chunker.contentTypeOf(input.sourceId),
      bodyHash: contentHash(input.body),
    };
  });
  const loaded = await loadAggregates(
    store,
    planned.map((p) => p.stream),
    ingestDecider,
  );

  /** The version the input makes of a document in `state`, and whether it differs from the current one. */
  const versionOf = (doc: (typeof planned)[number], state: DocumentState) => {
    const { input } = doc;
    const current = state.current;
    const fields: DocumentIngested['data'] = {
      documentId: doc.documentId,
      source: input.source,
      sourceId: input.sourceId,
      sourceUrl: input.sourceUrl,
      title: input.title,
      author: input.author,
      createdAt: input.createdAt ?? current?.createdAt ?? input.updatedAt ?? context.now,
      updatedAt: input.updatedAt ?? context.now,
      contentType: doc.contentType,
      tags: input.tags,
      metadata: input.metadata,
      bodyHash: doc.bodyHash,
      bodyBytes: Buffer.byteLength(input.body),
      chunks: [],
    };
    const reusable =
      current && current.bodyHash === doc.bodyHash && current.contentType === doc.contentType
        ? current.chunks
        : null;
    return { fields, changed: !(current && sameVersion(current, fields)), reusable };
  };

  // The documents that make a new version: their bodies, and the chunk texts of those whose body is
  // new to them, are stored together.
  const versions = planned.map((doc, i) => ({ doc, ...versionOf(doc, loaded[i]!.state) }));
  const changed = versions.filter((v) => v.changed).map((v) => v.doc);
  const toChunk = versions.filter((v) => v.changed && !v.reusable).map((v) => v.doc);
  const stored = new Set(changed);
  const chunked = new Map(
    (await storeVersions(chunker, content, changed, toChunk.map(chunkInput))).map((chunks, k) => [toChunk[k]!, chunks]),
  );

  // A document given twice waits for its earlier ingestion, and reads its stream again: appends to
  // one stream from one command would otherwise carry the same event ids.
  const previous = new Map<string, Promise<unknown>>();
  return Promise.allSettled(
    planned.map(async (doc, i): Promise<IngestResult> => {
      const earlier = previous.get(doc.stream);
      const done = (async () => {
        if (earlier) await earlier.catch(() => undefined);
        return ingestOne(doc, earlier ? null : loaded[i]!);
      })();
      previous.set(doc.stream, done);
      return done;
    }),
  );

  async function ingestOne(
    doc: (typeof planned)[number],
    preloaded: LoadedState<DocumentState> | null,
  ): Promise<IngestResult> {
    let first = preloaded;
    const { result } = await runCommand(
      store,
      doc.stream,
      // The batch's read first; a retry after a conflict reads the stream again.
      async () => {
        const state = first ?? (await loadAggregateAsOf(store, doc.stream, ingestDecider));
        first = null;
        return state;
      },
      async (
        state,
      ): Promise<Decision<DocumentEvent, { outcome: IngestOutcome; versions: number; chunks: number }>> => {
        const { fields, changed, reusable } = versionOf(doc, state);
        const versions = state.versions;
        if (!changed)
          return {
            events: [],
            result: { outcome: 'unchanged', versions, chunks: state.current!.chunks.length },
          };
        // A version the batch's read did not foresee (its stream changed since) stores its content now.
        let chunks = reusable ?? chunked.get(doc);
        if (!chunks || !stored.has(doc)) {
          const late = await storeVersions(chunker, content, stored.has(doc) ? [] : [doc], chunks ? [] : [chunkInput(doc)]);
          stored.add(doc);
          chunks ??= late[0]!;
        }
        const events = ingestDecider.decide({ kind: 'ingest', data: { ...fields, chunks } }, state, context);
        return {
          events,
          result: {
            outcome: state.current ? 'updated' : 'created',
            versions: versions + events.length,
            chunks: chunks.length,
          },
        };
      },
      context,
      { retries: 3 },
    );
    return {
      documentId: doc.documentId,
      outcome: result.outcome,
      version: result.versions,
      chunks: result.chunks,
    };
  }
};

const chunkInput = (doc: { documentId: string; input: { sourceId: string; body: string }; contentType: string }) => ({
  documentId: doc.documentId,
  path: doc.input.sourceId,
  contentType: doc.contentType,
  body: doc.input.body,
});

/**
 * Stores the bodies of `versions` and the chunk texts of `toChunk`, chunked here, in one write
 * (a body that is also a chunk's text is one row); answers each of `toChunk`'s chunks.
 */
const storeVersions = async (
  chunker: Chunker,
  content: ContentStore,
  versions: readonly { input: { body: string } }[],
  toChunk: readonly Parameters<Chunker['chunk']>[0][],
): Promise<DocumentIngested['data']['chunks'][]> => {
  const chunked = await Promise.all(toChunk.map((input) => chunker.chunk(input)));
  const texts = [...versions.map((doc) => doc.input.body), ...chunked.flatMap((chunks) => chunks.map((c) => c.text))];
  const hashes = texts.length > 0 ? await content.put(texts) : [];
  let next = versions.length;
  return chunked.map((chunks) =>
    chunks.map(({ text: _text, ...chunk }) => ({ ...chunk, textHash: hashes[next++]! })),
  );
};
