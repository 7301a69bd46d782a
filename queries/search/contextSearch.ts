import { z } from 'zod';
import {
  getRelatedInfo,
  RelatedInfoInputSchema,
  RelatedInfoOutputSchema,
  type RelatedInfo,
  type RelatedInfoDeps,
} from './getRelatedInfo.js';
import {
  SearchInputSchema,
  SearchResultSchema as DocumentResultSchema,
  NO_MODEL,
  withDefaultMode,
  type SearchInput,
  type SearchOutput,
} from './searchDocuments.js';
import { ValidationError } from '../../src/errors.js';
import { defineOperation, type OperationContext } from '../../src/operations.js';
import { parseInput } from '../../src/validation.js';
import {
  SearchRequestSchema,
  SearchResponseSchema,
  SearchResultSchema,
  searchWithWorkContext,
  type SearchResponse,
  type WorkContextSearchDeps,
} from './searchWithWorkContext.js';

/** `1 source`, `2 sources`. */
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** A score as an LLM needs it: three decimals say enough about order. */
const scoreText = (score: number) => String(Number(score.toFixed(3)));

/** Results as a block an LLM can read in its context window. */
export const formatSearchResults = (query: string, output: SearchResponse): string => {
  if (output.results.length === 0) return `No results for "${query}".`;
  const blocks = output.results.map((r, i) => {
    const { metadata } = r;
    const boosts = metadata.boosted_by.length ? ` (boosted: ${metadata.boosted_by.join(', ')})` : '';
    // A unit of code is named by its kind (the result's type) and symbol, wherever in the file it is.
    const unit = metadata.type === metadata.source_type ? null : [metadata.type, metadata.symbol].filter(Boolean).join(' ');
    const place = [metadata.source_type, unit, metadata.lines && `lines ${metadata.lines}`].filter(Boolean).join(', ');
    return [
      `[${i + 1}] ${metadata.title ?? metadata.path} — ${r.source} (id ${metadata.document_id})`,
      `score ${scoreText(r.score)}, ${place}, updated ${metadata.last_modified}${boosts}`,
      r.content,
    ].join('\n');
  });
  const more = output.pagination.has_more
    ? `\n\nMore results: pass pagination.cursor "${output.pagination.next_cursor}" for the next page.`
    : '';
  const { total_results: total } = output.pagination;
  const sources = count(output.query_metadata.sources_searched, 'source');
  return `Context for "${query}" (${output.results.length} of ${count(total, 'result')}, ${sources}):\n\n${blocks.join('\n\n')}${more}`;
};

const formatRelatedInfo = (info: RelatedInfo): string => {
  const target = info.target.file_path ?? info.target.ticket_id ?? '';
  const lines = [`Related to ${target}:`];
  if (info.documents.length)
    lines.push(
      'Documents:',
      ...info.documents.map((d) => `- ${d.path} (${d.relation}${d.title ? `: ${d.title}` : ''})`),
    );
  if (info.chunks.length)
    lines.push(
      'Code and sections:',
      ...info.chunks.map((c) => `- ${c.symbol ?? c.kind ?? 'chunk'}${c.lines ? ` lines ${c.lines}` : ''}`),
    );
  if (info.annotations.length)
    lines.push(
      'Annotations:',
      ...info.annotations.map(
        (a) =>
          `- ${a.chunk_id}: ${[...a.categories, ...a.labels].join(', ')}${a.summary ? ` — ${a.summary}` : ''}`,
      ),
    );
  if (info.relations.length)
    lines.push(
      'Relations:',
      ...info.relations.map((r) => `- ${r.source_chunk_id} ${r.type} ${r.target_chunk_id}`),
    );
  if (info.jobs.length)
    lines.push('Indexing jobs:', ...info.jobs.map((j) => `- ${j.job_id} ${j.status} (${j.repo_path})`));
  if (info.history.length)
    lines.push('History:', ...info.history.map((h) => `- ${h.at} ${h.event} by ${h.by}`));
  return lines.length > 1 ? lines.join('\n') : `Nothing indexed relates to ${target}.`;
};

export interface ContextOperationDeps {
  search: WorkContextSearchDeps;
  related: RelatedInfoDeps;
}

const SEARCH_MODES = ['keyword', 'semantic', 'hybrid'] as const;
type SearchMode = (typeof SEARCH_MODES)[number];

/** The REST API's search request, which also takes the tool API's (`mode`, `limit`, filters by source, tags and time). */
const ContextSearchInputSchema = SearchRequestSchema.extend({
  mode: z
    .enum(SEARCH_MODES)
    .optional()
    .describe('Default: hybrid when an embedding model is loaded, keyword otherwise (the result says which)'),
  limit: z.number().int().min(1).max(100).optional().describe('Maximum results; answers in the {results} shape'),
  filters: z
    .object({
      ...SearchRequestSchema.shape.filters.unwrap().shape,
      ...SearchInputSchema.shape.filters.unwrap().shape,
    })
    .strict()
    .optional(),
  explain: z.boolean().optional().describe("Add each result's component scores"),
  fusion: z.enum(['rrf', 'weighted']).optional().describe('How hybrid mode combines the two rankings'),
}).strict();
type ContextSearchInput = z.output<typeof ContextSearchInputSchema>;

const ContextSearchOutputSchema = z.object({
  results: z.array(z.union([SearchResultSchema, DocumentResultSchema])),
  pagination: SearchResponseSchema.shape.pagination.optional(),
  query_metadata: SearchResponseSchema.shape.query_metadata.optional(),
  mode: z.enum(SEARCH_MODES).describe('How results were ranked'),
  mode_notice: z.string().optional().describe('Why the ranking is not the one asked for, or not hybrid by default'),
  rerank_notice: z
    .string()
    .optional()
    .describe('Present when the configured reranker could not be used: the results are in fused order'),
});
type ContextSearchOutput = z.output<typeof ContextSearchOutputSchema>;

/** Which seed a request follows: the tool API's fields answer the tool API's `{results}` shape. */
const requestDialect = (input: ContextSearchInput): '000' | '002' => {
  const f = input.filters ?? {};
  const own000 = [input.mode, input.limit, input.explain, input.fusion, f.source, f.tags, f.since, f.until];
  const own002 = [input.work_context, input.top_k, input.pagination, f.source_types, f.date_range];
  const is000 = own000.some((v) => v !== undefined);
  if (is000 && own002.some((v) => v !== undefined))
    throw new ValidationError(
      'Give either mode, limit, explain, fusion and filters source, tags, since, until, or work_context, top_k, ' +
        'pagination and filters source_types, date_range: not both',
    );
  return is000 ? '000' : '002';
};

const contextSearch = async (
  deps: WorkContextSearchDeps,
  input: ContextSearchInput,
  context: OperationContext,
): Promise<ContextSearchOutput> => {
  if (requestDialect(input) === '000') {
    const { mode, limit, filters, explain, fusion, as_of: asOf } = input;
    const request: SearchInput = { query: input.query, limit, filters, explain, fusion, asOf };
    const { found, ...used } = await withDefaultMode(mode, (m) => deps.search({ ...request, mode: m }, context));
    return { ...found, ...used };
  }
  // The REST API's search ranks hybrid when it can; record which ranking answered.
  let ranked = 'keyword' as SearchMode;
  const recording: WorkContextSearchDeps = {
    ...deps,
    search: async (request, searchContext) => {
      const found = await deps.search(request, searchContext);
      ranked = request.mode ?? 'keyword';
      return found;
    },
  };
  const found = await searchWithWorkContext(recording, input, context);
  return { ...found, mode: ranked, ...(ranked === 'hybrid' ? {} : { mode_notice: NO_MODEL }) };
};

const formatDocumentResults = (query: string, output: SearchOutput): string => {
  if (output.results.length === 0) return `No results for "${query}".`;
  const blocks = output.results.map((r, i) =>
    [`[${i + 1}] ${r.title ?? r.source_id} — ${r.source}:${r.source_id} (id ${r.id})`, `score ${scoreText(r.score)}, updated ${r.updated_at}`, r.snippet].join('\n'),
  );
  return `Context for "${query}" (${count(output.results.length, 'result')}):\n\n${blocks.join('\n\n')}`;
};

const formatContextSearch = (output: ContextSearchOutput, input: ContextSearchInput): string => {
  const text =
    output.pagination && output.query_metadata
      ? formatSearchResults(input.query, output as SearchResponse)
      : formatDocumentResults(input.query, output as SearchOutput);
  const rerankNotice = output.rerank_notice ?? output.query_metadata?.rerank_notice;
  return `${text}\n\nRanked by ${output.mode} search${output.mode_notice ? ` (${output.mode_notice})` : ''}.${rerankNotice ? `\n${rerankNotice}.` : ''}`;
};

/** The REST API's MCP tools: the same slices the REST API serves. */
export const contextOperations = ({ search, related }: ContextOperationDeps) => [
  defineOperation({
    name: 'context.search',
    title: 'Search with work context',
    description:
      "Performs a comprehensive search using the user's query and current working context (active file, branch, open tickets) " +
      'to find the most relevant code, discussions, and documents; returns them formatted for an LLM context window. ' +
      'Hybrid (keyword and semantic) when an embedding model is loaded, keyword otherwise; `mode` chooses. ' +
      'Open a result whole with context.get.',
    toolset: 'search',
    writes: false,
    scope: 'search:read',
    input: ContextSearchInputSchema,
    output: ContextSearchOutputSchema,
    run: (input, context) => contextSearch(search, input, context),
    // The tool API's tool: over MCP too, its errors are the tool API's.
    mcpErrors: 'tools',
    formatText: formatContextSearch,
  }),
  defineOperation({
    name: 'context.get_related_info',
    title: 'Related information',
    description:
      'Finds information directly related to a file or ticket: its documents and chunks, documents mentioning it, annotations, relations, indexing jobs and history. Use for vague questions like "what\'s the history of this file?"',
    toolset: 'search',
    writes: false,
    scope: 'search:read',
    input: RelatedInfoInputSchema,
    output: RelatedInfoOutputSchema,
    run: (input, context) => getRelatedInfo(related, parseInput(RelatedInfoInputSchema, input), context),
    formatText: (output) => formatRelatedInfo(output),
  }),
];
