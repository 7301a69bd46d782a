import { statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { rerankerFromConfig } from './rerankerFromConfig.js';
import { treeSitterChunker } from '../../infra/chunking/chunker.js';
import { scanFilesystem, type ScannedFile, type SkippedFile } from '../../infra/connectors/index.js';
import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import { createAsOfSchemas } from '../../infra/search/asOfSchemas.js';
import { connectMeilisearch, createMeiliKeywordIndex } from '../../infra/search/meiliKeywordIndex.js';
import { createPgTextsearchKeywordIndex } from '../../infra/search/pgTextsearchKeywordIndex.js';
import { countSetAside } from '../../infra/search/pgvectorIndex.js';
import { ingestDocumentsOperation, ingestDocumentsSurfaces } from '../../commands/search/ingestDocuments.js';
import { ingestOperation, ingestSurfaces, type IngestInput } from '../../commands/search/ingestSources.js';
import type { IngestTally } from '../domain/ingestTally.js';
import { settle } from '../engine/settling.js';
import type { Settling } from '../domain/settling.js';
import { documentsProjection } from '../../projections/search/documents.js';
import { keywordIndexProjection } from '../../projections/search/keywordIndex.js';
import { semanticIndexProjection } from '../../projections/search/semanticIndex.js';
import { cancelledJobs } from '../services/jobReads.js';
import { indexJobsFromOperations } from './indexJobsFromOperations.js';
import { getDocumentOperation, getDocumentSurfaces } from '../../queries/search/getDocument.js';
import { listChunksOperation } from '../../queries/search/listChunks.js';
import { listSourcesOperation, listSourcesSurfaces } from '../../queries/search/listSources.js';
import { createSearchAsOf } from '../../queries/search/searchAsOf.js';
import { searchOperation, searchSurfaces, type SearchInput, type SearchOutput } from '../../queries/search/searchDocuments.js';
import { contextOperations } from '../../queries/search/contextSearch.js';
import { searchApiOperation, searchApiSurfaces } from '../../queries/search/searchApi.js';
import { searchSuggestionsOperation, searchSuggestionsSurfaces } from '../../queries/search/searchSuggestions.js';
import type { WorkContextSearchDeps } from '../../queries/search/searchWithWorkContext.js';
import { createPinnedRankings } from '../../infra/postgres/pinnedRankings.js';
import { commandContext } from '../engine/commands.js';
import { NotConfiguredError, NotFoundError, UnavailableError, ValidationError } from '../errors.js';
import { mountOperation } from '../http/operationRoute.js';
import { ingestFiles } from '../ingestion/ingestFiles.js';
import { readableRootsOf } from '../ingestion/readableRoots.js';
import type { ReadableRoots } from '../ports/readableRoots.js';
import type { LedgerModule, ModuleContext, SearchApi } from '../module.js';
import { callOperation, type OperationContext } from '../operations.js';
import { DEFAULT_PROJECT } from '../domain/workspace.js';
import { parseInput } from '../validation.js';
import type { Subscription } from '../ports/eventStore.js';
import { configuredSources, sourcesOf } from './configuredSources.js';
import { createSemanticSearch } from './semanticSearch.js';

/** How long an ingest's answer waits for the documents and keyword index before it answers that they are still settling. */
const SETTLE_TIMEOUT_MS = 60_000;
/** Removing what a source no longer has reads the documents read model: it must be current first. */
const INDEXING_TIMEOUT_MS = 30 * 60_000;

/** A file's id as a source id: its path from the working directory, with forward slashes. */
const sourceIdOf = (absolutePath: string, cwd: string) => {
  const relative = path.relative(cwd, absolutePath);
  return (relative.startsWith('..') || path.isAbsolute(relative) ? absolutePath : relative).split(path.sep).join('/');
};

interface PathToScan {
  absolute: string;
  isFile: boolean;
}

/** Every given path checked before any is read: one outside the roots, or missing, ingests nothing. */
const pathsToScan = (paths: readonly string[], readable: ReadableRoots, base: string): PathToScan[] =>
  paths.map((given) => {
    const absolute = readable.resolve(given, { base, field: 'paths' });
    let stats: Stats;
    try {
      stats = statSync(absolute);
    } catch {
      throw new ValidationError(`Path '${given}' does not exist`);
    }
    if (!stats.isFile() && !stats.isDirectory()) {
      throw new ValidationError(`Path '${given}' is neither a file nor a folder: a pipe, socket or device is not read`);
    }
    return { absolute, isFile: stats.isFile() };
  });

/** Folders are walked; a single file is read through its folder with an include of its name. */
async function* scanPaths(
  paths: readonly PathToScan[],
  input: IngestInput,
  cwd: string,
): AsyncGenerator<ScannedFile | SkippedFile> {
  for (const { absolute, isFile } of paths) {
    const scan = isFile
      ? scanFilesystem({ roots: [path.dirname(absolute)], include: [path.basename(absolute)] })
      : scanFilesystem({ roots: [absolute], include: input.include, exclude: input.exclude });
    for await (const file of scan) {
      // A single file is picked out of its folder: its siblings are not the caller's business.
      if (isFile && file.status === 'skipped' && file.reason === 'excluded') continue;
      yield { ...file, sourceId: sourceIdOf(file.absolutePath, cwd) };
    }
  }
}

/** An ingest's answer once keyword search sees what it stored; past the bound, the answer says it is settling. */
const readYourWrites = async <T extends object>(context: ModuleContext, answer: T): Promise<T & { settling?: Settling }> => {
  const head = await context.store.headPosition();
  const settling = await settle(context.waitForProjections(head, SETTLE_TIMEOUT_MS), head);
  return settling ? { ...answer, settling } : answer;
};

const ingestRunner = (context: ModuleContext, deps: Parameters<typeof ingestFiles>[0]) => {
  const sources = configuredSources(context.config);
  const readable = readableRootsOf(context.config);
  return async (input: IngestInput, operation: OperationContext) => {
    const command = commandContext(operation.actor, {
      project: operation.project,
      correlationId: operation.correlationId,
    });
    const onProgress = operation.onProgress;
    // Read-your-writes: when ingest answers, keyword search already sees what it ingested. The
    // semantic index embeds on its own; a search answered before it is done says so.
    const indexed = async (work: Promise<IngestTally>): Promise<IngestTally> => readYourWrites(context, await work);
    if (input.paths?.length) {
      // The CLI beside a server names its own working directory; the roots decide what may be read.
      const base = path.resolve(input.base_dir ?? '.');
      const paths = pathsToScan(input.paths, readable, base);
      return indexed(
        ingestFiles(deps, scanPaths(paths, input, base), {
          source: input.source ?? 'filesystem',
          context: command,
          onProgress,
        }),
      );
    }
    // Another tenant's sources are not the caller's to see; the operator at the terminal ingests any into its tenant.
    const own = operation.actor.tenant === null ? sources : sourcesOf(sources, operation.project);
    const source = own.find((s) => s.name === input.source);
    if (!source) {
      throw new NotFoundError(`No configured source '${input.source}'`, { configured: own.map((s) => s.name) });
    }
    const health = source.health();
    if (!health.healthy)
      throw new NotConfiguredError(`Source '${source.name}' cannot be read as configured: ${health.notes}`, {
        source: source.name,
      });
    return indexed(
      ingestFiles(deps, source.scan(), {
        source: source.name,
        context: { ...command, project: source.config.tenant },
        onProgress,
        removeMissing: {
          readModels: context.readModels,
          beforeRemoval: async () => context.waitForProjections(await context.store.headPosition(), INDEXING_TIMEOUT_MS),
        },
      }),
    );
  };
};

/**
 * How long a project's count of sources is reused by searches. Counting reads every document of the
 * project, on the connection that indexing writes through; the count changes only when a new
 * source is ingested.
 */
const SOURCE_COUNT_TTL_MS = 5_000;

/** `read`, answered from its last result for the same key while that is younger than `ttlMs`. */
const recentFor = <T>(ttlMs: number, read: (key: string) => Promise<T>) => {
  const recent = new Map<string, { at: number; value: Promise<T> }>();
  return (key: string): Promise<T> => {
    const now = Date.now();
    const hit = recent.get(key);
    if (hit && now - hit.at < ttlMs) return hit.value;
    for (const [old, { at }] of recent) if (now - at >= ttlMs) recent.delete(old);
    const value = read(key);
    recent.set(key, { at: now, value });
    value.catch(() => recent.delete(key));
    return value;
  };
};

/**
 * Search with work context (context.search, context.get_related_info, `/api/v1/search`, suggestions):
 * ranked by `rank`, with the tenant's search settings; related information lists the project's
 * jobs when the deployment runs them.
 */
const workContextSearch = async (context: ModuleContext, rank: SearchApi['rank']) => {
  const { db, store, readModels, content, keyring } = context;
  const search = (input: SearchInput, operationContext: OperationContext) =>
    callOperation(rank, parseInput(rank.input, input), operationContext, { onBehalf: true });
  const searchDeps: WorkContextSearchDeps = {
    search,
    sourcesSearched: recentFor(SOURCE_COUNT_TTL_MS, async (project) => (await readModels.count('documents', 'source', { project })).size),
    limits: async (project) => {
      const settings = context.features().settings;
      if (!settings) throw new UnavailableError('Search settings are not available in this deployment');
      const { search } = await settings.forTenant(project);
      return { defaultTopK: search.default_top_k, maxResults: search.max_results };
    },
    rankings: await createPinnedRankings(db),
  };
  const indexJobs = indexJobsFromOperations(() => {
    const jobs = context.features().jobs;
    if (!jobs) throw new UnavailableError('Background indexing is not available in this deployment');
    return jobs;
  });
  // Without background jobs, a file or ticket has none.
  const jobsOrNone = async (operationContext: OperationContext) => {
    try {
      return await indexJobs.list(operationContext);
    } catch (error) {
      if (error instanceof UnavailableError) return [];
      throw error;
    }
  };
  return [
    ...contextOperations({
      search: searchDeps,
      related: { readModels, content, store, keyring, search, jobs: jobsOrNone },
    }),
    searchApiOperation(searchDeps),
    searchSuggestionsOperation(readModels),
  ];
};

/** How long a health check waits for the keyword index's server. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Documents and search: ingestion, the documents read model, keyword and semantic indexes, their
 * queries, search with work context, and the documents as MCP resources.
 */
export const searchModule: LedgerModule = {
  name: 'search',
  setup: async (context) => {
    const { config, logger, db, readModels, store, content } = context;
    const ingestDeps = { store, content, chunker: treeSitterChunker };
    const keyword =
      config.search.keywordIndex === 'meilisearch'
        ? await createMeiliKeywordIndex({
            client: connectMeilisearch({
              url: config.search.meilisearchUrl!,
              apiKey: config.search.meilisearchApiKey,
              requestTimeoutMs: config.search.meilisearchTimeoutMs,
            }),
            db,
            content,
            keyword: keywordIndexProjection,
          })
        : await createPgTextsearchKeywordIndex(db, content, keywordIndexProjection);
    const semantic = await createSemanticSearch({
      config,
      db,
      content,
      logger,
      addProjection: (projection) => context.projections().add(projection),
      cancelled: cancelledJobs(readModels, () => context.features().jobs !== undefined),
      semanticBehind: async () => (await context.projections().behind(await store.headPosition(), ['semantic'])) !== null,
    });
    const sources = configuredSources(config);
    const asOfSchemas = await createAsOfSchemas(
      db,
      content,
      keywordIndexProjection,
      semantic.embedder && semanticIndexProjection(semantic.embedder),
    );
    // As-of keyword indexes are built with BM25 in Postgres, also where the live one is Meilisearch.
    const bm25InPostgres = (await db.availableExtensions()).has('pg_textsearch');
    const asOf = createSearchAsOf({
      store,
      openSpace: () => asOfSchemas.open(),
      capacity: config.search.asOfCache,
      batchSize: config.projections.batchSize,
      keywordUnavailable: bm25InPostgres
        ? undefined
        : 'Keyword and hybrid search as of a past position need the pg_textsearch extension in PostgreSQL, ' +
          'which this server lacks; semantic search as of a past position works',
      logger,
    });

    const reranker = rerankerFromConfig(config);
    // Past-position indexes hold copies of chunk texts: a forgetting drops those built before it.
    let forgets: Subscription | undefined;
    const searchNow = searchOperation({
      keyword: keyword.index,
      get semantic() {
        return semantic.state;
      },
      readModels,
      content,
      defaultLimit: config.search.defaultLimit,
      asOf,
      ...reranker.deps,
      rerankingEnabled: async (project) => (await context.features().settings?.forTenant(project))?.search.enable_reranking ?? true,
      semanticBehind: async () =>
        (await context.projections().behind(await store.headPosition(), ['semantic']))?.events ?? null,
      semanticSetAside: (project) => countSetAside(db, project),
    });
    // A request that may rank by meaning tries the model again first: it may have been fetched since start-up.
    const search: typeof searchNow = {
      ...searchNow,
      run: async (input, operation) => {
        const { mode } = input as { mode?: unknown };
        if (mode !== 'keyword') await semantic.retry();
        return callOperation(searchNow, input, operation, { onBehalf: true });
      },
    };
    // Read-your-writes, as for ingest: when a batch is answered, keyword search sees it (within a bound).
    const ingestBatchNow = ingestDocumentsOperation(ingestDeps);
    const ingestBatch: typeof ingestBatchNow = {
      ...ingestBatchNow,
      run: async (input, operation) => readYourWrites(context, await callOperation(ingestBatchNow, input, operation, { onBehalf: true })),
    };
    const get = getDocumentOperation({ readModels, content });
    const listSources = listSourcesOperation({
      readModels,
      configuredSources: (project) => Promise.resolve(sourcesOf(sources, project).map((s) => s.health())),
    });
    const probeKeywordIndex = async (): Promise<string | undefined> => {
      try {
        await keyword.index.probe?.(PROBE_TIMEOUT_MS);
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    };
    // Health checks at once share one probe: an anonymous caller cannot multiply the server's requests.
    let probing: Promise<string | undefined> | undefined;
    const api: SearchApi = {
      rank: search,
      // Features that ingest (jobs, connectors) wait for the read models themselves, where they need to.
      ingest: ingestBatchNow,
      chunks: listChunksOperation({ readModels, content, keyword: keyword.index }),
      get,
      sources: listSources,
      keywordIndexProblem: () => (probing ??= probeKeywordIndex().finally(() => (probing = undefined))),
    };
    return {
      projections: [
        await postgresDocumentProjection(db, documentsProjection),
        keyword.projection,
        ...(semantic.projection ? [semantic.projection] : []),
      ],
      operations: [
        search,
        get,
        listSources,
        api.chunks,
        ingestOperation(ingestRunner(context, ingestDeps)),
        ingestBatch,
        ...(await workContextSearch(context, search)),
      ],
      api: { search: api },
      mcp: async () => {
        const { registerFileResources } = await import('../http/api/fileResources.js');
        return (server, actor) => registerFileResources(server, actor.tenant ?? DEFAULT_PROJECT, { readModels, content });
      },
      routes: (app) => {
        // The tool API's search answer is fixed field by field: which mode ran is for the other surfaces.
        mountOperation(app, 'POST', '/tools/search', search, ({ mode: _mode, mode_notice: _notice, ...answer }: SearchOutput) => answer);
        mountOperation(app, 'POST', '/tools/get', get);
        mountOperation(app, 'GET', '/tools/sources', listSources);
      },
      start: async () => {
        semantic.start();
        // Loading a local model takes a while: the server answers meanwhile, and logs how it went.
        void reranker.announce(logger);
        forgets = store.subscribe(() => asOf.discardForgotten(), {
          from: await store.headPosition(),
          filter: { eventTypes: ['DocumentForgotten'] },
          onError: (error) =>
            logger.warn({ error: (error as Error).message }, 'could not drop past-position search indexes'),
        });
      },
      close: async () => {
        await forgets?.stop();
        await asOf.close();
        await semantic.close();
        await reranker.close();
      },
    };
  },
  surfaces: [
    searchSurfaces,
    getDocumentSurfaces,
    listSourcesSurfaces,
    ingestSurfaces,
    ingestDocumentsSurfaces,
    searchApiSurfaces,
    searchSuggestionsSurfaces,
  ],
};
