import path from 'node:path';
import { z } from 'zod';
import { ANNOTATION_CHUNKS, type AnnotationChunkRow } from '../../src/domain/annotationChunkViews.js';
import type { DocumentView } from '../../src/domain/documentView.js';
import { lineRange } from '../../src/domain/documents.js';
import { annotationStream } from '../../src/domain/annotations.js';
import { streamId } from '../../src/domain/events.js';
import type { OperationContext } from '../../src/operations.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import type { ReadModels } from '../../src/ports/projections.js';
import { hasForgotten, openFields, protectedValuesOf } from '../../src/domain/annotationText.js';
import type { Keyring } from '../../src/ports/keyring.js';
import type { SearchInput, SearchOutput } from './searchDocuments.js';

export const RelatedInfoInputSchema = z
  .object({
    file_path: z
      .string()
      .trim()
      .min(1)
      .max(1024)
      .optional()
      .describe('Path to the file to get related info for'),
    ticket_id: z.string().trim().min(1).max(64).optional().describe('Ticket ID to get related info for'),
  })
  .refine((v) => v.file_path !== undefined || v.ticket_id !== undefined, 'give a file_path or a ticket_id');
export type RelatedInfoInput = z.output<typeof RelatedInfoInputSchema>;

export const RelatedInfoOutputSchema = z.object({
  target: z.object({ file_path: z.string().nullable(), ticket_id: z.string().nullable() }),
  documents: z.array(
    z.object({
      id: z.string(),
      title: z.string().nullable(),
      source: z.string(),
      path: z.string(),
      updated_at: z.string(),
      relation: z.enum(['is_file', 'mentions']),
      snippet: z.string().nullable(),
    }),
  ),
  chunks: z.array(
    z.object({
      document_id: z.string(),
      chunk_id: z.string(),
      kind: z.string().nullable(),
      symbol: z.string().nullable(),
      lines: z.string().nullable(),
      text: z.string(),
    }),
  ),
  annotations: z.array(
    z.object({
      session_id: z.string(),
      chunk_id: z.string(),
      categories: z.array(z.string()),
      labels: z.array(z.string()),
      tags: z.array(z.string()),
      summary: z.string().nullable(),
      notes: z.string().nullable(),
      forgotten: z
        .literal(true)
        .optional()
        .describe('Present when its author was forgotten: notes and summary are null'),
    }),
  ),
  relations: z.array(
    z.object({
      session_id: z.string(),
      source_chunk_id: z.string(),
      target_chunk_id: z.string(),
      type: z.string(),
    }),
  ),
  jobs: z.array(
    z.object({ job_id: z.string(), repo_path: z.string(), status: z.string(), created_at: z.string() }),
  ),
  history: z.array(
    z.object({
      document_id: z.string(),
      event: z.string(),
      at: z.string(),
      by: z.string(),
      version: z.number().int(),
    }),
  ),
});
export type RelatedInfo = z.infer<typeof RelatedInfoOutputSchema>;

export interface RelatedInfoDeps {
  readModels: ReadModels;
  content: ContentStore;
  store: EventStore;
  keyring: Keyring;
  search(input: SearchInput, context: OperationContext): Promise<SearchOutput>;
  /** The project's jobs, or none where jobs are not available. */
  jobs(
    context: OperationContext,
  ): Promise<{ job_id: string; repo_path: string; status: string; created_at: string }[]>;
}

const MAX_CHUNKS = 100;
const MAX_MENTIONS = 10;

const normalisePath = (p: string) => p.replace(/\\/g, '/').replace(/^\.\//, '');

/**
 * Everything the ledger knows that touches a file or a ticket, in the caller's project only: the
 * file's document and its chunks, documents that mention it, annotations and relations on those
 * chunks, indexing jobs over its folder, and the file's history of versions.
 */
export const getRelatedInfo = async (
  deps: RelatedInfoDeps,
  input: RelatedInfoInput,
  context: OperationContext,
): Promise<RelatedInfo> => {
  const { project } = context;
  const filePath = input.file_path ? normalisePath(input.file_path) : null;

  const own = filePath
    ? (
        await deps.readModels.find<DocumentView>('documents', {
          where: { project, sourceId: filePath },
          limit: 10,
        })
      ).items
    : [];
  const mentionQueries = [...new Set([filePath, filePath?.split('/').pop(), input.ticket_id])].filter(
    (q): q is string => !!q,
  );
  const mentions = (
    await Promise.all(
      mentionQueries.map((query) => deps.search({ query, mode: 'keyword', limit: MAX_MENTIONS }, context)),
    )
  ).flatMap((r) => r.results);

  const documents: RelatedInfo['documents'] = own.map((doc) => ({
    id: doc.id,
    title: doc.title,
    source: doc.source,
    path: doc.sourceId,
    updated_at: doc.updatedAt,
    relation: 'is_file',
    snippet: null,
  }));
  for (const hit of mentions) {
    if (documents.some((d) => d.id === hit.id)) continue;
    documents.push({
      id: hit.id,
      title: hit.title,
      source: hit.source,
      path: hit.source_id,
      updated_at: hit.updated_at,
      relation: 'mentions',
      snippet: hit.snippet,
    });
  }

  const ownChunks = own.flatMap((doc) => doc.chunks.map((chunk) => ({ doc, chunk }))).slice(0, MAX_CHUNKS);
  const texts = await deps.content.get(ownChunks.map((c) => c.chunk.textHash));
  const chunks = ownChunks.map(({ doc, chunk }) => ({
    document_id: doc.id,
    chunk_id: chunk.id,
    kind: chunk.kind,
    symbol: chunk.symbol,
    lines: lineRange(chunk),
    text: (texts.get(chunk.textHash) ?? '').slice(0, 400),
  }));

  // Annotation rows carry no project: their session's stream says which project they belong to.
  const rows = (
    await Promise.all(
      chunks.map((c) =>
        deps.readModels.find<AnnotationChunkRow>(ANNOTATION_CHUNKS, {
          where: { chunkId: c.chunk_id },
          limit: 50,
        }),
      ),
    )
  ).flatMap((r) => r.items);
  const sessionProjects = new Map<string, string | null>();
  for (const sessionId of new Set(rows.map((r) => r.sessionId))) {
    const [first] = await deps.store.readStream(annotationStream(sessionId), { maxCount: 1 });
    sessionProjects.set(sessionId, first?.metadata.project ?? null);
  }
  const visible = rows.filter((r) => sessionProjects.get(r.sessionId) === project);
  const opener = await deps.keyring.opener(protectedValuesOf(visible));

  const jobs = filePath
    ? (await deps.jobs(context))
        // A job touches the file when it indexed the folder the file is in.
        .filter((job) => path.resolve(filePath).startsWith(`${job.repo_path.replace(/\/$/, '')}/`))
        .map(({ job_id, repo_path, status, created_at }) => ({ job_id, repo_path, status, created_at }))
    : [];

  const history = (
    await Promise.all(
      own.map(async (doc) =>
        (await deps.store.readStream(streamId('doc', doc.id))).map((event, index) => ({
          document_id: doc.id,
          event: event.type,
          at: event.recordedAt,
          by: event.metadata.actor.subject,
          version: index + 1,
        })),
      ),
    )
  ).flat();

  return {
    target: { file_path: filePath, ticket_id: input.ticket_id ?? null },
    documents,
    chunks,
    annotations: visible
      .filter((r) => r.annotated)
      .map((r) => {
        const { summary, notes } = openFields(r, opener);
        return {
          session_id: r.sessionId,
          chunk_id: r.chunkId,
          categories: r.categories,
          labels: r.labels,
          tags: r.tags,
          summary,
          notes,
          ...(hasForgotten({ summary, notes }) ? { forgotten: true as const } : {}),
        };
      }),
    relations: visible.flatMap((r) =>
      Object.entries(r.relations).flatMap(([type, targets]) =>
        targets.map((target) => ({
          session_id: r.sessionId,
          source_chunk_id: r.chunkId,
          target_chunk_id: target,
          type,
        })),
      ),
    ),
    jobs,
    history,
  };
};
