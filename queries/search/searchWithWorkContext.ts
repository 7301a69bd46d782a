import { createHash } from 'node:crypto';
import { z } from 'zod';
import { Instant } from '../../src/domain/instant.js';
import { isCodeUnit } from '../../src/domain/documents.js';
import { SOURCE_TYPES, sourceTypeOf } from '../../src/domain/sourceTypes.js';
import { AsOfSchema } from '../../src/domain/asOf.js';
import { ValidationError } from '../../src/errors.js';
import type { OperationContext } from '../../src/operations.js';
import type { Pinned, PinnedRankings } from '../../src/ports/pinnedRankings.js';
import { withDefaultMode, type SearchInput, type SearchMode, type SearchOutput } from './searchDocuments.js';

export const WorkContextSchema = z.object({
  active_file: z.string().max(1024).optional(),
  git_branch: z.string().max(256).optional(),
  open_ticket_ids: z.array(z.string().max(64)).max(50).optional(),
});

export const SearchRequestSchema = z
  .object({
    query: z.string().trim().min(1, "The 'query' field is required and cannot be empty").max(2000),
    work_context: WorkContextSchema.optional(),
    top_k: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe('Results per page unless pagination.limit is given (default: config search.default_top_k)'),
    filters: z
      .object({
        source_types: z.array(z.enum(SOURCE_TYPES)).optional(),
        date_range: z
          .object({
            from: Instant.optional(),
            to: Instant.optional(),
          })
          .optional(),
      })
      .optional(),
    pagination: z
      .object({ cursor: z.string().max(512).optional(), limit: z.number().int().min(1).max(100).default(20) })
      .optional(),
    as_of: AsOfSchema.optional().describe(
      'Search as it would have answered at a past moment: a position from the event history, or an ISO 8601 ' +
        'timestamp (the last position at or before it).',
    ),
  })
  .strict();
export type SearchRequest = z.output<typeof SearchRequestSchema>;

export const SearchResultSchema = z.object({
  source: z.string(),
  content: z.string(),
  score: z.number(),
  metadata: z.object({
    document_id: z.string(),
    title: z.string().nullable(),
    type: z
      .string()
      .describe("The unit of code the result is (function, class, method, …), else its source's type"),
    source_type: z.string(),
    path: z.string(),
    symbol: z.string().nullable().describe('The function, class or heading the shown chunk holds'),
    lines: z.string().nullable().describe('Lines of the shown chunk in its file: start-end'),
    last_modified: z.string(),
    boosted_by: z.array(z.string()),
    rerank_score: z
      .number()
      .optional()
      .describe("The reranker's score of the shown chunk, when the configured reranker ordered the results"),
  }),
});

export const SearchResponseSchema = z.object({
  results: z.array(SearchResultSchema),
  pagination: z.object({
    has_more: z.boolean(),
    next_cursor: z.string().nullable(),
    total_results: z.number().int(),
  }),
  query_metadata: z.object({
    execution_time_ms: z.number().int(),
    sources_searched: z.number().int(),
    rerank_notice: z
      .string()
      .optional()
      .describe('Present when the configured reranker could not be used: the results are in fused order'),
  }),
});
export type SearchResponse = z.infer<typeof SearchResponseSchema>;

export interface WorkContextSearchDeps {
  /** The ledger's `search` operation (project-scoped by the context). */
  search(input: SearchInput, context: OperationContext): Promise<SearchOutput>;
  /** How many sources the project's documents come from. */
  sourcesSearched(project: string): Promise<number>;
  /** Defaults and caps from the runtime settings. */
  /** The search settings of a project (its tenant's). */
  limits(project: string): Promise<{ defaultTopK: number; maxResults: number }>;
  /** The rankings that cursors page through. */
  rankings: PinnedRankings<RankedHit>;
}

/** One result of a ranking, with its work-context boosts. */
export interface RankedHit {
  hit: SearchOutput['results'][number];
  reasons: string[];
  score: number;
}

type Hit = SearchOutput['results'][number];

const TICKET = /\b[A-Z][A-Z0-9]+-\d+\b/g;

const normalisePath = (p: string) => p.replace(/\\/g, '/').replace(/^\.\//, '');
const directoryOf = (p: string) => p.slice(0, Math.max(0, p.lastIndexOf('/')));

/** Why a result matters more given what the caller is working on, and by how much. */
const boostsFor = (
  hit: Hit,
  activeFile: string | null,
  tickets: readonly string[],
): { factor: number; reasons: string[] } => {
  const reasons: string[] = [];
  let factor = 1;
  const path = normalisePath(hit.source_id);
  if (activeFile) {
    if (path === activeFile || path.endsWith(`/${activeFile}`)) {
      factor *= 2;
      reasons.push('active_file');
    } else if (directoryOf(activeFile) && directoryOf(path) === directoryOf(activeFile)) {
      factor *= 1.4;
      reasons.push('near_active_file');
    }
  }
  const haystack = `${hit.title ?? ''}\n${hit.source_id}\n${hit.snippet}`.toUpperCase();
  for (const ticket of tickets) {
    if (haystack.includes(ticket)) {
      factor *= 1.5;
      reasons.push(`ticket:${ticket}`);
    }
  }
  return { factor, reasons };
};

interface Cursor {
  /** The pinned ranking the pages are cut from. */
  ranking: string;
  offset: number;
  fingerprint: string;
}

const fingerprintOf = (request: SearchRequest, maxResults: number) =>
  createHash('sha256')
    .update(
      JSON.stringify([
        request.query,
        request.work_context ?? null,
        request.filters ?? null,
        maxResults,
        request.as_of ?? null,
      ]),
    )
    .digest('base64url')
    .slice(0, 12);

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString('base64url');

const decodeCursor = (raw: string, fingerprint: string): Cursor => {
  let cursor: Partial<Cursor>;
  try {
    cursor = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<Cursor>;
  } catch {
    throw new ValidationError('pagination.cursor is not a cursor this API issued');
  }
  if (
    typeof cursor.offset !== 'number' ||
    !Number.isInteger(cursor.offset) ||
    cursor.offset < 0 ||
    typeof cursor.ranking !== 'string'
  ) {
    throw new ValidationError('pagination.cursor is not a cursor this API issued');
  }
  if (cursor.fingerprint !== fingerprint)
    throw new ValidationError('pagination.cursor belongs to a different query');
  return cursor as Cursor;
};

/** Who may read a pinned ranking back: the project the first page was searched in. */
const ownerOf = (context: OperationContext) => JSON.stringify([context.actor.tenant, context.project]);

/** The ledger's ranking for the request, re-ordered by the work context, up to the configured cap. */
const rank = async (
  deps: WorkContextSearchDeps,
  request: SearchRequest,
  context: OperationContext,
): Promise<Pinned<RankedHit> & { sourcesSearched: number; rerankNotice?: string }> => {
  const { maxResults } = await deps.limits(context.project);
  const range = request.filters?.date_range;
  const ranking = (mode: SearchMode) =>
    deps.search(
      {
        query: request.query,
        mode,
        limit: maxResults,
        filters: { since: range?.from, until: range?.to },
        asOf: request.as_of,
        chunkInfo: true,
        // For the reranker's scores.
        explain: true,
      },
      context,
    );
  // The REST API's search is hybrid; without an embedding model it is keyword search alone.
  const [{ found }, sourcesSearched] = await Promise.all([
    withDefaultMode(undefined, ranking),
    deps.sourcesSearched(context.project),
  ]);
  const wanted = request.filters?.source_types;
  const isWanted = (source: string) => !wanted?.length || wanted.includes(sourceTypeOf(source) as never);
  const kept = found.results.filter((hit) => isWanted(hit.source));

  const activeFile = request.work_context?.active_file
    ? normalisePath(request.work_context.active_file)
    : null;
  const tickets = [
    ...new Set([
      ...(request.work_context?.open_ticket_ids ?? []).map((t) => t.toUpperCase()),
      ...(request.work_context?.git_branch?.toUpperCase().match(TICKET) ?? []),
    ]),
  ];
  const ranked = kept
    .map((hit, rank): RankedHit => {
      const { factor, reasons } = boostsFor(hit, activeFile, tickets);
      return { hit, reasons, score: (1 - rank / (kept.length + 1)) * factor };
    })
    .sort((a, b) => b.score - a.score);
  return { ranking: ranked, sourcesSearched, rerankNotice: found.rerank_notice };
};

/**
 * The REST API's search: the ledger's ranking, re-ordered by the caller's work context (active file,
 * branch, open tickets), filtered by source type, and paged with an opaque cursor.
 */
export const searchWithWorkContext = async (
  deps: WorkContextSearchDeps,
  request: SearchRequest,
  context: OperationContext,
): Promise<SearchResponse> => {
  const started = performance.now();
  const { defaultTopK, maxResults } = await deps.limits(context.project);
  // Every match up to the configured cap is ranked; top_k (or pagination.limit) is the page size.
  const pageSize = Math.min(request.pagination?.limit ?? request.top_k ?? defaultTopK, maxResults);
  const fingerprint = fingerprintOf(request, maxResults);
  const cursor = request.pagination?.cursor ? decodeCursor(request.pagination.cursor, fingerprint) : null;
  const offset = cursor?.offset ?? 0;
  const pinned = cursor ? await deps.rankings.get(cursor.ranking, ownerOf(context)) : undefined;
  if (cursor && !pinned)
    throw new ValidationError(
      'pagination.cursor has expired or is unknown: run the search again without a cursor to start from the first page',
    );
  // A later page is cut from the first page's ranking: the first page said whether it was reranked.
  const { ranking: ranked, sourcesSearched, rerankNotice } = pinned
    ? { ...pinned, sourcesSearched: await deps.sourcesSearched(context.project), rerankNotice: undefined }
    : await rank(deps, request, context);
  const top = ranked[0]?.score ?? 1;

  const page = ranked.slice(offset, offset + pageSize);
  const hasMore = offset + pageSize < ranked.length;
  return {
    results: page.map(({ hit, reasons, score }) => {
      const chunk = hit.chunk ?? { kind: null, symbol: null, lines: null };
      return {
        source:
          hit.source_url ??
          `${sourceTypeOf(hit.source) === 'file' ? 'file://' : `${hit.source}:`}${hit.source_id}`,
        content: hit.snippet,
        score: Number((score / top).toFixed(4)),
        metadata: {
          document_id: hit.id,
          title: hit.title,
          type: isCodeUnit(chunk) ? chunk.kind! : sourceTypeOf(hit.source),
          source_type: sourceTypeOf(hit.source),
          path: hit.source_id,
          symbol: chunk.symbol,
          lines: chunk.lines,
          last_modified: hit.updated_at,
          boosted_by: reasons,
          ...(hit.explain?.rerank === undefined ? {} : { rerank_score: hit.explain.rerank }),
        },
      };
    }),
    pagination: {
      has_more: hasMore,
      next_cursor: hasMore
        ? encodeCursor({
            ranking: cursor?.ranking ?? (await deps.rankings.pin(ownerOf(context), { ranking: ranked })),
            offset: offset + pageSize,
            fingerprint,
          })
        : null,
      // The pages serve the whole ranking (up to the configured cap), and nothing past it.
      total_results: ranked.length,
    },
    query_metadata: {
      execution_time_ms: Math.round(performance.now() - started),
      sources_searched: sourcesSearched,
      ...(rerankNotice ? { rerank_notice: rerankNotice } : {}),
    },
  };
};
