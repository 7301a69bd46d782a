import { z } from 'zod';
import type { DocumentView } from '../../src/domain/documentView.js';
import { documentFold, documentVersion, DocumentVersionSchema, type DocumentVersion } from '../../src/domain/documentVersion.js';
import { streamId } from '../../src/domain/events.js';
import { inUtc } from '../../src/domain/instant.js';
import { AsOfSchema, foldUntil, parseAsOf } from '../../src/domain/asOf.js';
import { NotFoundError } from '../../src/errors.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import type { ReadModels } from '../../src/ports/projections.js';
import { parseInput } from '../../src/validation.js';

export const GetDocumentInputSchema = z.object({
  id: z.uuid('id must be a document uuid').describe('A document id, as returned by search'),
});

export const GetDocumentOutputSchema = z.object({
  id: z.string(),
  source: z.string(),
  source_id: z.string(),
  source_url: z.string().nullable(),
  title: z.string().nullable(),
  author: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  content_type: z.string(),
  body: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  chunks: z.array(z.object({ index: z.number().int(), text: z.string() })),
  forgotten: z
    .literal(true)
    .optional()
    .describe('Present once its content was forgotten: body and chunks are empty'),
});
export type GetDocumentOutput = z.infer<typeof GetDocumentOutputSchema>;

export interface GetDocumentDeps {
  readModels: ReadModels;
  content: ContentStore;
}

/** A whole document: its current version's body and chunks. */
export const getDocument = async (
  { readModels, content }: GetDocumentDeps,
  rawInput: unknown,
  project: string,
): Promise<GetDocumentOutput> => {
  const { id } = parseInput(GetDocumentInputSchema, rawInput);
  const doc = await readModels.get<DocumentView>('documents', id);
  // Another project's document is as unknown as a missing one.
  if (!doc || doc.project !== project) throw new NotFoundError(`No document with id ${id}`);
  // A forgotten document shows nothing, even text another document still holds.
  const texts = doc.forgotten
    ? new Map<string, string>()
    : await content.get([doc.bodyHash, ...doc.chunks.map((c) => c.textHash)]);
  return {
    id: doc.id,
    source: doc.source,
    source_id: doc.sourceId,
    source_url: doc.sourceUrl,
    title: doc.title,
    author: doc.author,
    created_at: inUtc(doc.createdAt),
    updated_at: inUtc(doc.updatedAt),
    content_type: doc.contentType,
    body: texts.get(doc.bodyHash) ?? '',
    metadata: doc.metadata,
    chunks: doc.chunks.map((c) => ({ index: c.index, text: texts.get(c.textHash) ?? '' })),
    ...(doc.forgotten ? { forgotten: true as const } : {}),
  };
};

export const getDocumentSurfaces = {
  name: 'get',
  cli: {
    command: ['get'],
    description: 'print a document by id',
    arguments: [{ name: 'id', field: 'id', description: 'document id' }],
    options: [
      {
        flags: '--as-of <position|iso>',
        field: 'as_of',
        description: 'which version it was then, and its chunk ids',
        runs: 'documents.as_of',
        shows: {
          print: {
            fields: {
              document: '{id}',
              title: '{title}',
              source: (v: DocumentVersion) => (v.source === null ? null : `${v.source}:${v.source_id}`),
              version: '{version} (stream revision {revision})',
              state: (v: DocumentVersion) => (v.forgotten ? 'forgotten' : v.removed ? 'removed' : 'present'),
              'content hash': '{content_hash}',
              updated: '{updated_at}',
              chunks: '{chunk_ids}',
            },
          },
        },
      },
    ],
    catchUp: 'documents',
    print: {
      line: (d: GetDocumentOutput) =>
        `# ${d.title ?? d.source_id}\n${d.source}:${d.source_id}\n\n${
          d.forgotten ? '(Its content was forgotten: `ctx history doc-<id>` shows when and why.)' : d.body
        }`,
    },
  },
} as const satisfies OperationSurfaces;

export const getDocumentOperation = (deps: GetDocumentDeps) =>
  defineOperation({
    ...getDocumentSurfaces,
    title: 'Get document',
    description: 'Retrieve a whole document by id (from search results): metadata, body and chunks.',
    toolset: 'search',
    writes: false,
    input: GetDocumentInputSchema,
    output: GetDocumentOutputSchema,
    run: (input, context) => getDocument(deps, input, context.project),
    // The tool API's tool: over MCP too, its errors are the tool API's.
    mcpErrors: 'tools',
  });

export const DocumentAsOfInputSchema = z.object({
  id: z.uuid('id must be a document uuid').describe('A document id, as returned by search'),
  as_of: AsOfSchema.optional().describe('The moment: a position from the event history or an ISO 8601 timestamp; now when omitted'),
});

/** A document as it was at a past moment (or now), folded from its stream. */
export const documentAsOf = async (store: EventStore, rawInput: unknown, project?: string): Promise<DocumentVersion> => {
  const { id, as_of: asOf } = parseInput(DocumentAsOfInputSchema, rawInput);
  const events = await store.readStream(streamId('doc', id));
  const version =
    events[0] && (project === undefined || events[0].metadata.project === project)
      ? documentVersion(foldUntil(events, documentFold, asOf === undefined ? undefined : parseAsOf(asOf)), id)
      : null;
  if (!version) throw new NotFoundError(`No document with id ${id}${asOf ? ` as of ${asOf}` : ''}`);
  return version;
};

export const documentAsOfOperation = (store: EventStore) =>
  defineOperation({
    name: 'documents.as_of',
    title: 'Document as of a moment',
    description:
      'Which version a document was at a past moment (a position from the event history or an ISO timestamp): ' +
      'its content hash, stream revision and chunk ids then.',
    toolset: 'search',
    writes: false,
    input: DocumentAsOfInputSchema,
    output: DocumentVersionSchema,
    run: (input, context) => documentAsOf(store, input, context.project),
  });
