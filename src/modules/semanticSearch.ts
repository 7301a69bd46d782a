import type { Logger } from 'pino';
import { createPgvectorIndex, embeddingBacklog } from '../../infra/search/pgvectorIndex.js';
import type { Database } from '../../infra/postgres/database.js';
import { semanticIndexProjection } from '../../projections/search/semanticIndex.js';
import { type CancelledWork } from '../ports/searchIndex.js';
import type { Config } from '../config.js';
import type { ContentStore } from '../ports/contentStore.js';
import type { Embedder } from '../ports/embedder.js';
import type { RunnableProjection } from '../ports/projections.js';
import type { VectorIndex } from '../ports/searchIndex.js';
import { watchEmbeddingProgress } from './embeddingProgress.js';
import { describeEmbedder, disabledReason, embedderFromConfig } from './embedderFromConfig.js';

/** Retries while the embedder cannot load: soon at first, then less often. */
const FIRST_RETRY_MS = 2_000;
const MAX_RETRY_MS = 60_000;

export type SemanticState = { index: VectorIndex; embedder: Embedder } | { disabled: string };

export interface SemanticSearch {
  /** What search uses, read at every request: the index and its embedder, or why there are none. */
  readonly state: SemanticState;
  /** The semantic index's projection, when the embedder loaded at start-up. */
  readonly projection: RunnableProjection | null;
  /** Forwards to the embedder once loaded (for indexes built as of a past position); null when the provider is "none". */
  readonly embedder: Embedder | null;
  /** Tries to load the embedder now, unless it is loaded or off by configuration; one attempt at a time. */
  retry(): Promise<void>;
  /** Logs the active embedder and keeps retrying in the background until it loads. */
  start(): void;
  close(): Promise<void>;
}

export interface SemanticSearchDeps {
  config: Config;
  db: Database;
  content: ContentStore;
  logger: Logger;
  /** Starts the semantic index's projection once an embedder loads after start-up. */
  addProjection(projection: RunnableProjection): Promise<void>;
  /** Whose chunks wait unembedded: those of cancelled work. */
  cancelled: CancelledWork;
  /** Whether the semantic projection has events left to apply. */
  semanticBehind: () => Promise<boolean>;
}

/**
 * Semantic search that survives a missing model: keyword search works meanwhile, and the embedder
 * is tried again on each semantic request and in the background, so a model fetched while the
 * server runs is picked up without a restart; its projection then embeds the backlog.
 */
export const createSemanticSearch = async (deps: SemanticSearchDeps): Promise<SemanticSearch> => {
  const { config, db, content, logger } = deps;
  const off = config.embeddings.provider === 'none';
  let state: SemanticState = { disabled: off ? disabledReason(config) : 'the embedder is loading' };
  let projection: RunnableProjection | null = null;
  let attempt: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  let serving = false;
  let stopWatching: (() => void) | null = null;
  /** A server logs how embedding a backlog goes; with Meilisearch there is no chunk count to compare with. */
  const watchProgress = () => {
    if (serving && !stopWatching && config.search.keywordIndex === 'pg_textsearch')
      stopWatching = watchEmbeddingProgress({ behind: deps.semanticBehind, backlog: () => embeddingBacklog(db) }, logger);
  };

  /** Loads the embedder and opens its index; on failure, the state says why. */
  const load = async (): Promise<
    { embedder: Embedder; projection: RunnableProjection } | { disabled: string }
  > => {
    let embedder: Embedder | undefined;
    try {
      embedder = await embedderFromConfig(config, db);
      const made = await createPgvectorIndex(db, content, semanticIndexProjection(embedder, deps.cancelled));
      state = { embedder, index: made.index };
      projection = made.projection;
      return { embedder, projection: made.projection };
    } catch (error) {
      await embedder?.close().catch(() => undefined);
      const disabled = { disabled: disabledReason(config, error) };
      state = disabled;
      return disabled;
    }
  };

  if (!off) await load();
  const loadedAtStart = projection;

  const retry = (): Promise<void> => {
    if (off || closed || 'embedder' in state) return Promise.resolve();
    attempt ??= (async () => {
      const loaded = await load();
      if ('disabled' in loaded) {
        logger.debug(`semantic search is still off: ${loaded.disabled}`);
        return;
      }
      logger.info(`semantic search is on: ${describeEmbedder(config, loaded.embedder)}`);
      await deps.addProjection(loaded.projection);
      watchProgress();
    })().finally(() => {
      attempt = null;
    });
    return attempt;
  };

  const retryLater = (delayMs: number) => {
    timer = setTimeout(() => {
      void retry().then(() => {
        if (!closed && !('embedder' in state)) retryLater(Math.min(MAX_RETRY_MS, delayMs * 2));
      });
    }, delayMs);
    timer.unref();
  };

  const current = (): Embedder => {
    if (!('embedder' in state)) throw new Error('No embedder is loaded');
    return state.embedder;
  };

  return {
    get state() {
      return state;
    },
    projection: loadedAtStart,
    embedder: off
      ? null
      : {
          get model() {
            return current().model;
          },
          get dimensions() {
            return current().dimensions;
          },
          embed: (texts, kind) => current().embed(texts, kind),
          close: () => Promise.resolve(),
        },
    retry,
    start() {
      serving = true;
      if ('embedder' in state) {
        logger.info(`embedder: ${describeEmbedder(config, state.embedder)}`);
        watchProgress();
        return;
      }
      // Said by a process that serves, not by every one-shot command: a search that needs the model says why itself.
      if (!off) logger.warn(`semantic search is off: ${state.disabled}`);
      logger.info(
        off
          ? 'embedder: none (embeddings.provider = "none"): keyword search only'
          : 'embedder: none: keyword search only — run `ctx model fetch` for semantic search',
      );
      if (!off) retryLater(FIRST_RETRY_MS);
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      stopWatching?.();
      await attempt?.catch(() => undefined);
      if ('embedder' in state) await state.embedder.close();
    },
  };
};
