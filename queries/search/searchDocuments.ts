import { z } from 'zod';
import { isCodeUnit, lineRange, type ChunkRef } from '../../src/domain/documents.js';
import type { DocumentView } from '../../src/domain/documentView.js';
import { Instant, inUtc } from '../../src/domain/instant.js';
import { AsOfSchema } from '../../src/domain/asOf.js';
import { EmbeddingsDisabledError, UnavailableError, ValidationError } from '../../src/errors.js';
import { defineOperation, type OperationContext, type OperationSurfaces } from '../../src/operations.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import type { Embedder } from '../../src/ports/embedder.js';
import type { Reranker } from '../../src/ports/reranker.js';
import type { ReadModels } from '../../src/ports/projections.js';
import type { DocumentCount, KeywordIndex, ScoredChunk, SearchFilters, VectorIndex } from '../../src/ports/searchIndex.js';
import { parseInput } from '../../src/validation.js';
import {
  adaptiveShare,
  FEEDBACK_WEIGHT,
  feedbackChunks,
  fuse,
  type ChunkRankings,
  type DocumentRank,
  type FusedDocument,
} from './fusion.js';
import type { SearchAsOf, SearchModel, SearchView } from './searchAsOf.js';
import { snippetOf } from './snippet.js';

const isoOrNull = Instant.nullable().optional();

export const SEARCH_MODES = ['keyword', 'semantic', 'hybrid'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

export const SearchInputSchema = z.object({
  query: z.string().trim().min(1, 'query must not be empty').max(2000).describe('Search query'),
  mode: z
    .enum(SEARCH_MODES)
    .optional()
    .describe('Ranking: BM25, embeddings, or both. Default: hybrid when an embedding model is loaded, keyword otherwise'),
  limit: z.number().int().min(1).max(100).optional().describe('Maximum results (default from config)'),
  source: z.string().nullable().optional().describe('Only documents from this source'),
  filters: z
    .object({
      source: z.string().nullable().optional(),
      tags: z.array(z.string()).optional(),
      since: isoOrNull,
      until: isoOrNull,
    })
    .optional(),
  fusion: z
    .enum(['adaptive', 'rrf', 'weighted'])
    .default('adaptive')
    .describe(
      'How hybrid mode combines the two rankings: normalised scores weighted per query by how sure each ranking is ' +
        '(adaptive), reciprocal ranks (rrf), or normalised scores averaged (weighted)',
    ),
  explain: z.boolean().default(false).describe("Add each result's component scores"),
  chunkInfo: z
    .boolean()
    .default(false)
    .describe(
      "Add the shown chunk's kind, symbol and lines to each result (`chunk`) rather than opening the snippet " +
        'of a unit of code with them',
    ),
  count: z
    .boolean()
    .default(false)
    .describe('Also count, per source, every document the query matches (keyword and hybrid modes)'),
  asOf: AsOfSchema.optional().describe(
    'Search as it would have answered at this past moment: a position from the event history, or an ISO 8601 ' +
      'timestamp (the last position at or before it).',
  ),
});
export type SearchInput = z.input<typeof SearchInputSchema>;

/** Where the document stands in one ranking: its rank among that ranking's documents, and its best chunk there. */
const ComponentRankSchema = z.object({
  rank: z.number(),
  score: z.number(),
  chunk_id: z.string(),
  /** What this ranking added to the result's score. */
  contribution: z.number(),
});

const ExplainSchema = z.object({
  /** The chunk shown as the snippet. */
  chunk_id: z.string(),
  keyword: ComponentRankSchema.nullable(),
  semantic: ComponentRankSchema.nullable(),
  /** The reranker's score for the shown chunk, when a reranker reordered the result. */
  rerank: z.number().optional(),
});

/** The chunk a result shows: what the chunker made of it. */
const ChunkInfoSchema = z.object({
  /** `function`, `class`, `method`, … for code; `section`, `text` or `lines` otherwise. */
  kind: z.string().nullable(),
  symbol: z.string().nullable(),
  /** `start-end`, 1-based and inclusive. */
  lines: z.string().nullable(),
});

export const SearchResultSchema = z.object({
  id: z.string(),
  score: z.number(),
  title: z.string().nullable(),
  source: z.string(),
  source_id: z.string(),
  updated_at: z.string(),
  snippet: z.string(),
  source_url: z.string().nullable(),
  explain: ExplainSchema.optional(),
  chunk: ChunkInfoSchema.optional(),
});
/** A hybrid search answered from one ranking because the other index was unavailable. */
const DegradedSchema = z.object({
  unavailable: z.enum(['keyword', 'semantic']),
  reason: z.string(),
});

export const SearchOutputSchema = z.object({
  results: z.array(SearchResultSchema),
  mode: z
    .enum(SEARCH_MODES)
    .optional()
    .describe('The mode that ranked the results: a search that names none runs hybrid when a model is loaded, keyword otherwise'),
  mode_notice: z.string().optional().describe('Why the mode differs from the default, when it does'),
  degraded: DegradedSchema.optional(),
  rerank_notice: z
    .string()
    .optional()
    .describe('Present when the configured reranker could not be used: the results are in fused order'),
  notice: z
    .string()
    .optional()
    .describe(
      'Present when the semantic index has yet to embed recent writes, or holds chunks of cancelled indexing ' +
        'jobs unembedded: the ranking by meaning may miss them',
    ),
  matches: z
    .record(z.string(), z.number().int())
    .optional()
    .describe(
      'With `count`: per source, the documents matching the query: those with its terms, and those only ' +
        'semantic search found among the results',
    ),
});
export type SearchOutput = z.infer<typeof SearchOutputSchema>;

export interface SearchDeps {
  keyword: KeywordIndex;
  semantic: { index: VectorIndex; embedder: Embedder } | { disabled: string };
  readModels: ReadModels;
  content: ContentStore;
  defaultLimit: number;
  /** Builds the indexes as they were at a past position; absent where that is not offered. */
  asOf?: SearchAsOf;
  /** How many events the semantic index has yet to apply; null when it is current. */
  semanticBehind?: () => Promise<number | null>;
  /** How many chunks of a project the semantic index holds unembedded, set aside by cancelled jobs. */
  semanticSetAside?: (project: string) => Promise<number>;
  /** Reorders the first `topK` fused results; absent when no reranker is configured. */
  rerank?: { reranker: Reranker; topK: number };
  /** Whether a project reranks (its `search.enable_reranking`); every project does when absent. */
  rerankingEnabled?: (project: string) => Promise<boolean>;
}

type ParsedSearch = z.output<typeof SearchInputSchema> & { mode: SearchMode };

export const NO_MODEL = 'No embedding model is loaded: keyword search only';

/**
 * The one rule for a search that names no mode: hybrid when an embedding model is loaded, keyword
 * otherwise. Runs `search` in the caller's mode or that one, and answers with the mode used.
 */
export const withDefaultMode = async <T>(
  mode: SearchMode | undefined,
  search: (mode: SearchMode) => Promise<T>,
): Promise<{ found: T; mode: SearchMode; mode_notice?: string }> => {
  if (mode) return { found: await search(mode), mode };
  try {
    return { found: await search('hybrid'), mode: 'hybrid' };
  } catch (error) {
    if (!(error instanceof EmbeddingsDisabledError)) throw error;
    return { found: await search('keyword'), mode: 'keyword', mode_notice: NO_MODEL };
  }
};

/** Chunks drawn from each ranking before fusion (documents mostly have one or two chunks each). */
const candidatesFor = (limit: number) => Math.max(50, limit * 2);

const componentRank = (rank: DocumentRank | null) =>
  rank && { rank: rank.rank, score: rank.score, chunk_id: rank.chunkId, contribution: rank.contribution };

const rankDocuments = async (
  deps: SearchDeps,
  input: ParsedSearch,
  project: string,
  view: SearchView,
): Promise<SearchOutput> => {
  const limit = input.limit ?? deps.defaultLimit;
  const filters: SearchFilters = {
    project,
    source: input.filters?.source ?? input.source ?? undefined,
    tags: input.filters?.tags,
    since: input.filters?.since ?? undefined,
    until: input.filters?.until ?? undefined,
  };
  const want = input.mode === 'keyword' ? limit * 3 : candidatesFor(limit);
  let queryVector: Float32Array | undefined;
  const semanticSearch = async (index: VectorIndex): Promise<ScoredChunk[]> => {
    if ('disabled' in deps.semantic) throw new EmbeddingsDisabledError(deps.semantic.disabled);
    [queryVector] = await deps.semantic.embedder.embed([input.query], 'query');
    return index.search(queryVector!, filters, want);
  };
  const rankings = await Promise.allSettled([
    input.mode === 'semantic' || !view.keyword
      ? []
      : view.keyword.search(input.query, filters, want),
    input.mode === 'keyword' || !view.semantic ? [] : semanticSearch(view.semantic),
  ]);
  const { keyword, semantic, degraded } = survivingRankings(input.mode, rankings);
  const fusion = input.mode === 'hybrid' ? input.fusion : input.mode === 'keyword' ? 'keyword' : 'semantic';
  const fused =
    fusion === 'adaptive'
      ? await fuseAdaptive({ keyword, semantic }, view.semantic, queryVector)
      : fuse({ keyword, semantic }, fusion);
  const rerank = deps.rerank && (deps.rerankingEnabled ? await deps.rerankingEnabled(project) : true) ? deps.rerank : undefined;
  // A reranker reads the texts of its first `topK` candidates, which may reach past the limit.
  const pool = fused.slice(0, rerank ? Math.max(limit, rerank.topK) : limit);

  const byId = await view.documents(
    pool.map((hit) => hit.documentId),
    pool.map((hit) => hit.chunkId),
  );
  const pooled = pool.map((hit): Pooled => {
    const doc = byId.get(hit.documentId);
    return { hit, doc, chunk: doc?.chunks.find((c) => c.id === hit.chunkId) };
  });
  const texts = await deps.content.get(pooled.flatMap(({ chunk }) => (chunk ? [chunk.textHash] : [])));
  const reranked: { order: Pooled[]; notice?: string } = rerank ? await rerankPool(rerank, input.query, pooled, texts) : { order: pooled };
  const top = reranked.order.slice(0, limit);

  // Counted once the results are known: the count needs only which documents semantic search alone found.
  const semanticOnly = new Set(top.filter(({ hit }) => !hit.keyword).map(({ hit }) => hit.documentId));
  const countDocuments = view.keyword?.countDocuments?.bind(view.keyword);
  const counting =
    input.count && input.mode !== 'semantic' && degraded?.unavailable !== 'keyword' && countDocuments
      ? countDocuments(input.query, filters, [...semanticOnly])
      : undefined;

  const results = top.flatMap(({ hit, doc, chunk, rerank }) => {
    if (!doc) return [];
    const snippet = hit.snippet ?? snippetOf(texts.get(chunk?.textHash ?? '') ?? '', input.query);
    return [
      {
        id: doc.id,
        score: hit.score,
        title: doc.title,
        source: doc.source,
        source_id: doc.sourceId,
        updated_at: inUtc(doc.updatedAt),
        snippet: input.chunkInfo || !chunk ? snippet : `${codeLabel(chunk)}${snippet}`,
        source_url: doc.sourceUrl,
        ...(input.explain
          ? {
              explain: {
                chunk_id: hit.chunkId,
                keyword: componentRank(hit.keyword),
                semantic: componentRank(hit.semantic),
                ...(rerank === undefined ? {} : { rerank }),
              },
            }
          : {}),
        ...(input.chunkInfo
          ? { chunk: { kind: chunk?.kind ?? null, symbol: chunk?.symbol ?? null, lines: chunk ? lineRange(chunk) : null } }
          : {}),
      },
    ];
  });
  const matches = counting && matchesPerSource(await counting, results, semanticOnly);
  return {
    results,
    ...(degraded ? { degraded } : {}),
    ...(reranked.notice ? { rerank_notice: reranked.notice } : {}),
    ...(matches ? { matches } : {}),
  };
};

interface Pooled {
  hit: FusedDocument;
  doc: DocumentView | undefined;
  chunk: ChunkRef | undefined;
  rerank?: number;
}

/**
 * The first `topK` candidates ordered by the reranker's score of their chunk's text, the rest after
 * them in fused order. A reranker that cannot be used leaves the fused order, with a notice saying so.
 */
const rerankPool = async (
  { reranker, topK }: NonNullable<SearchDeps['rerank']>,
  query: string,
  pooled: readonly Pooled[],
  texts: ReadonlyMap<string, string>,
): Promise<{ order: Pooled[]; notice?: string }> => {
  const head = pooled.slice(0, topK).filter((p) => p.doc && p.chunk);
  const rest = pooled.slice(topK);
  let scores: number[];
  try {
    scores = await reranker.score(query, head.map((p) => texts.get(p.chunk!.textHash) ?? ''));
  } catch (error) {
    if (!(error instanceof UnavailableError)) throw error;
    return { order: [...pooled], notice: `Results are in fused order: ${error.message}` };
  }
  const scored = head.map((p, i) => ({ ...p, rerank: scores[i]! }));
  // A stable sort: equal scores keep the fused order.
  scored.sort((a, b) => b.rerank - a.rerank);
  return { order: [...scored, ...rest] };
};

/** `function verifyToken (lines 5-7): ` before the snippet of a unit of code; nothing before any other. */
const codeLabel = (chunk: ChunkRef) => {
  if (!isCodeUnit(chunk)) return '';
  const lines = lineRange(chunk);
  return `${[chunk.kind, chunk.symbol].filter(Boolean).join(' ')}${lines ? ` (lines ${lines})` : ''}: `;
};

/**
 * Adaptive fusion, refined when both rankings agree on their first document (see feedbackChunks):
 * both rankings' chunks are ranked again by the query moved toward the first fused documents, and
 * fused at the share the first rankings set. The first fusion stands if the index has just become
 * unavailable.
 */
const fuseAdaptive = async (
  lists: ChunkRankings,
  index: VectorIndex | null,
  queryVector: Float32Array | undefined,
): Promise<FusedDocument[]> => {
  const share = adaptiveShare(lists);
  const fused = fuse(lists, 'adaptive', { share });
  const feedback = feedbackChunks(fused);
  if (!feedback || !index || !queryVector) return fused;
  const candidates = [...new Set([...lists.keyword, ...lists.semantic].map((hit) => hit.chunkId))];
  const refined = await index
    .rerank(queryVector, candidates, { chunkIds: feedback, weight: FEEDBACK_WEIGHT })
    .catch((error: unknown) => {
      if (error instanceof UnavailableError) return null;
      throw error;
    });
  return refined ? fuse({ keyword: lists.keyword, semantic: refined }, 'adaptive', { share }) : fused;
};

/** Documents with the query's terms, per source, and those among the results only semantic search found. */
const matchesPerSource = (
  counted: DocumentCount,
  results: readonly SearchOutput['results'][number][],
  semanticOnly: ReadonlySet<string>,
): Record<string, number> => {
  for (const result of results) {
    if (semanticOnly.has(result.id) && !counted.among.has(result.id))
      counted.bySource.set(result.source, (counted.bySource.get(result.source) ?? 0) + 1);
  }
  return Object.fromEntries(counted.bySource);
};

/**
 * Both rankings, or, in hybrid mode when one index is unavailable (its server down), the other
 * alone with the reason: a partial answer beats none. Any other failure is the search's.
 */
const survivingRankings = (
  mode: ParsedSearch['mode'],
  [keyword, semantic]: PromiseSettledResult<ScoredChunk[]>[],
): { keyword: ScoredChunk[]; semantic: ScoredChunk[]; degraded?: z.infer<typeof DegradedSchema> } => {
  const valueOf = (r: PromiseSettledResult<ScoredChunk[]>) => {
    if (r.status === 'rejected') throw r.reason;
    return r.value;
  };
  if (mode === 'hybrid') {
    const sides = [['keyword', keyword!, semantic!], ['semantic', semantic!, keyword!]] as const;
    for (const [unavailable, failed, other] of sides) {
      if (failed.status === 'rejected' && failed.reason instanceof UnavailableError && other.status === 'fulfilled') {
        return {
          keyword: unavailable === 'keyword' ? [] : other.value,
          semantic: unavailable === 'semantic' ? [] : other.value,
          degraded: { unavailable, reason: failed.reason.message },
        };
      }
    }
  }
  return { keyword: valueOf(keyword!), semantic: valueOf(semantic!) };
};

const modelsFor = (mode: ParsedSearch['mode']): SearchModel[] =>
  mode === 'hybrid' ? ['keyword', 'semantic'] : mode === 'keyword' ? ['keyword'] : ['semantic'];

/**
 * Ranked documents for a query: the best chunk of each, with a snippet around the matched terms.
 * With `asOf`, the same ranking over indexes and documents as they were at that moment.
 */
export const searchDocuments = async (
  deps: SearchDeps,
  rawInput: SearchInput,
  context: Pick<OperationContext, 'project' | 'onProgress'>,
): Promise<SearchOutput> => {
  const parsed = parseInput(SearchInputSchema, rawInput);
  const { found, ...used } = await withDefaultMode(parsed.mode, (mode) => searchInMode(deps, { ...parsed, mode }, context));
  return { ...found, ...used };
};

const searchInMode = async (
  deps: SearchDeps,
  input: ParsedSearch,
  context: Pick<OperationContext, 'project' | 'onProgress'>,
): Promise<SearchOutput> => {
  if (input.mode !== 'keyword' && 'disabled' in deps.semantic)
    throw new EmbeddingsDisabledError(deps.semantic.disabled);
  if (input.asOf === undefined) {
    const bySemantic = input.mode !== 'keyword' && 'index' in deps.semantic;
    const [found, behind, setAside] = await Promise.all([
      rankDocuments(deps, input, context.project, {
        keyword: deps.keyword,
        semantic: 'index' in deps.semantic ? deps.semantic.index : null,
        // A document's list of chunks can run to thousands: only the hits' are read.
        documents: (ids, chunkIds) => deps.readModels.getMany<DocumentView>('documents', ids, { field: 'chunks', ids: chunkIds }),
      }),
      bySemantic ? deps.semanticBehind?.() : null,
      bySemantic ? deps.semanticSetAside?.(context.project) : 0,
    ]);
    const notices = [...(behind ? [partlyEmbedded(behind)] : []), ...(setAside ? [leftUnembedded(setAside)] : [])];
    return notices.length > 0 ? { ...found, notice: notices.join('; ') } : found;
  }
  if (!deps.asOf)
    throw new ValidationError('Search as of a past position is not available in this deployment');
  return deps.asOf.use(
    input.asOf,
    modelsFor(input.mode),
    (view) => rankDocuments(deps, input, context.project, view),
    context.onProgress,
  );
};

const partlyEmbedded = (events: number) =>
  `The semantic index is still embedding (${events} events behind): ranking by meaning may miss the newest documents`;

const leftUnembedded = (chunks: number) =>
  `${chunks.toLocaleString('en-US')} chunks of cancelled indexing jobs are not embedded: ranking by meaning misses them until their path is indexed again`;

type SearchResult = SearchOutput['results'][number];
type Ranking = NonNullable<NonNullable<SearchResult['explain']>['keyword']>;

const ranking = (name: string, r: Ranking | null) =>
  r ? `${name} #${r.rank} (score ${r.score.toFixed(3)}, chunk ${r.chunk_id})` : `${name}: not ranked`;

const resultText = (r: SearchResult, i: number) =>
  [
    `${i + 1}. ${r.title ?? r.source_id}  (${r.source}:${r.source_id}, ${r.score.toFixed(3)})`,
    `   id ${r.id}`,
    ...(r.explain
      ? [
          `   ${ranking('keyword', r.explain.keyword)}; ${ranking('semantic', r.explain.semantic)}; ` +
            `${r.explain.rerank === undefined ? '' : `reranker score ${r.explain.rerank.toFixed(3)}; `}shown: chunk ${r.explain.chunk_id}`,
        ]
      : []),
    `   ${r.snippet}`,
  ].join('\n');

const searchText = ({ results, mode_notice, notice, rerank_notice }: SearchOutput) =>
  [
    ...(notice ? [`Note: ${notice}`] : []),
    ...(rerank_notice ? [`Note: ${rerank_notice}`] : []),
    results.length === 0
      ? 'No results. `ctx sources` lists what is indexed; `ctx ingest PATH` adds files and folders.'
      : results.map(resultText).join('\n'),
    ...(mode_notice ? [`(${mode_notice}; \`ctx model fetch\` adds semantic and hybrid search)`] : []),
  ].join('\n');

export const searchSurfaces = {
  name: 'search',
  cli: {
    command: ['search'],
    description: 'search the index',
    arguments: [{ name: 'query', field: 'query', description: 'what to look for', variadic: true, parse: 'words' }],
    options: [
      {
        flags: '--mode <mode>',
        field: 'mode',
        description: 'how to rank (default: hybrid when an embedding model is loaded, keyword otherwise)',
        choices: SEARCH_MODES,
      },
      { flags: '--limit <n>', field: 'limit', description: 'maximum results', parse: 'number' },
      { flags: '--source <name>', field: 'filters.source', description: 'only this source' },
      { flags: '--tag <tag...>', field: 'filters.tags', description: 'only documents with these tags' },
      { flags: '--since <iso>', field: 'filters.since', description: 'only documents updated since' },
      { flags: '--until <iso>', field: 'filters.until', description: 'only documents updated until' },
      { flags: '--explain', field: 'explain', description: "show each result's rank and score in the keyword and semantic rankings" },
      {
        flags: '--as-of <position|iso>',
        field: 'asOf',
        description: 'search as it would have answered then: a position from `ctx history`, or a time',
      },
    ],
    // Keyword search reads no embeddings: it need not wait for the semantic index.
    catchUp: (input: { mode?: SearchMode }) =>
      input.mode === 'keyword' ? ['documents', 'keyword'] : ['documents', 'keyword', 'semantic'],
    // As of a past position, the indexes are built from the events: the live ones need not catch up.
    asOfField: 'asOf',
    progress: (p: Record<string, unknown>) =>
      `building the ${String(p.model)} index as of ${String(p.position)}: ${String(p.processedEvents)} events`,
    print: { line: (output: SearchOutput) => searchText(output) },
  },
} as const satisfies OperationSurfaces;

export const searchOperation = (deps: SearchDeps) =>
  defineOperation({
    ...searchSurfaces,
    title: 'Search',
    description:
      'Search indexed documents and code by keyword (BM25), semantic (embeddings) or hybrid query; returns the best ' +
      'matching documents with a snippet each. Filter by source, tags and update time; `asOf` answers as search ' +
      'would have at a past position.',
    toolset: 'search',
    writes: false,
    input: SearchInputSchema,
    output: SearchOutputSchema,
    run: (input, context) => searchDocuments(deps, input, context),
  });
