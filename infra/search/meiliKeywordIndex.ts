import {
  Meilisearch,
  MeilisearchApiError,
  MeilisearchRequestError,
  MeilisearchRequestTimeOutError,
  MeilisearchTaskTimeOutError,
  type EnqueuedTask,
  type EnqueuedTaskPromise,
  type MultiSearchParams,
  type Task,
} from 'meilisearch';
import { CredentialsRefusedError, UnavailableError } from '../../src/errors.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import {
  CheckpointMovedError,
  type ProjectionSink,
  type RunnableProjection,
  type ShadowSink,
} from '../../src/ports/projections.js';
import type { ChunkIndexProjection, KeywordIndex, ScoredChunk } from '../../src/ports/searchIndex.js';
import { projectionCheckpoints } from '../postgres/checkpoints.js';
import type { Database } from '../postgres/database.js';
import {
  CHUNK_INDEX_SETTINGS,
  planReplacement,
  type MeiliChunkDocument,
} from './meiliChunkDocuments.js';
import { lastChanges } from './chunkChanges.js';
import { searchFilter } from './meiliFilters.js';
import { queryTerms, rankByTerms } from './meiliRanking.js';

export interface MeiliConnection {
  url: string;
  apiKey?: string;
  /** A request unanswered this long counts as an outage (the client alone would wait forever). */
  requestTimeoutMs?: number;
}

export interface MeiliKeywordIndexOptions {
  client: Meilisearch;
  /** Where the checkpoint is kept (with every other projection's). */
  db: Database;
  content: ContentStore;
  /** What the index holds: the keyword index projection. */
  keyword: ChunkIndexProjection<string>;
  /** The live index; a rebuild fills `<indexUid>__shadow` and swaps it in. */
  indexUid?: string;
  /** How long to wait for Meilisearch to finish one task. */
  taskTimeoutMs?: number;
}

/** A keyword hit with Meilisearch's highlighted crop of the chunk text (typos included). */
export type MeiliScoredChunk = ScoredChunk & { snippet: string | null };

export const HIGHLIGHT = { pre: '**', post: '**' } as const;
const SNIPPET_WORDS = 32;
/** Chunks fetched per query word: enough that the best chunks of a search contain its rarer words. */
const HITS_PER_TERM = 200;
/** Chunks each word of a query is counted over, as the embedded index counts its best 400. */
const COUNT_PER_TERM = 400;
/** What Meilisearch is asked to put around matches: private-use characters no text carries, unlike markdown's `**`. */
const MATCH = { pre: '\uE000', post: '\uE001' } as const;
const MATCHED = /\uE000([^\uE001]*)\uE001([\p{Ll}\p{M}]*)/gu;

/**
 * Meilisearch's crop with each matched word highlighted whole. It marks only as many characters as
 * the query word had, so a typo (`certficates`) or a prefix lights part of the word it found; the
 * lowercase rest of that word joins the highlight (a camelCase hump after it stays a word of its own).
 */
export const highlightWholeWords = (formatted: string): string =>
  formatted.replace(
    MATCHED,
    (_, matched: string, rest: string) => `${HIGHLIGHT.pre}${matched}${rest}${HIGHLIGHT.post}`,
  );

export const connectMeilisearch = ({ url, apiKey, requestTimeoutMs = 30_000 }: MeiliConnection): Meilisearch =>
  new Meilisearch({ host: url, timeout: requestTimeoutMs, ...(apiKey ? { apiKey } : {}) });

/** Answers that say the server (or a proxy before it) cannot serve now, not that the request is wrong. */
const isTransientStatus = (status: number) => status >= 500 || status === 408 || status === 429;

/**
 * A Meilisearch client error as the port's: unreachable, too slow, or answering with a server
 * error is an outage (UnavailableError, which jobs wait out as `blocked`); refusing the API key is
 * a configuration to mend, waited out alike; an error the server reports about the request passes
 * as is.
 */
export const translateMeiliError = (error: unknown): unknown => {
  if (
    error instanceof MeilisearchRequestError ||
    error instanceof MeilisearchRequestTimeOutError ||
    error instanceof MeilisearchTaskTimeOutError ||
    (error instanceof MeilisearchApiError && isTransientStatus(error.response.status))
  ) {
    return new UnavailableError(`Meilisearch is unavailable: ${reasonOf(error)}`, { cause: error });
  }
  if (error instanceof MeilisearchApiError && (error.response.status === 401 || error.response.status === 403)) {
    return new CredentialsRefusedError(
      `Meilisearch refused the configured API key: ${reasonOf(error)}. Set search.meilisearch_api_key ` +
        "to a key with the actions docs/deployment.md lists on the ledger's indexes",
      { cause: error },
    );
  }
  return error;
};

/**
 * The client wraps what went wrong ("fetch failed", ECONNREFUSED, a timeout) in causes: all of it
 * says why. An answer of the server's gives its status and error code.
 */
const reasonOf = (error: Error): string => {
  const messages: string[] = [];
  for (let at: unknown = error; at instanceof Error && messages.length < 4; at = at.cause) {
    const code = (at as NodeJS.ErrnoException).code;
    messages.push(typeof code === 'string' && !at.message.includes(code) ? `${at.message} (${code})` : at.message);
  }
  if (!(error instanceof MeilisearchApiError)) return messages.join(': ');
  const code = error.cause?.code;
  return `${messages.join(': ')} (HTTP ${error.response.status}${code ? `, ${code}` : ''})`;
};

/** Whether Meilisearch answered with this error code. */
const hasCode = (error: unknown, code: string) => error instanceof MeilisearchApiError && error.cause?.code === code;

/**
 * A task that did not succeed, as the port's error. Meilisearch failing in itself or in the system
 * under it (a full disk, say) is an outage, which jobs wait out. A request it refuses is an index
 * not as the ledger makes it (another tool's of that name, or its settings changed since): no
 * retry mends that, so waits end with it at once, and nothing is lost meanwhile.
 */
const taskFailure = (task: Task, what: string): Error => {
  const { error } = task;
  const message = `Meilisearch task ${task.uid} (${what}) ${task.status}: ${error?.message ?? 'no reason given'}`;
  if (error?.type === 'system' || error?.type === 'internal') return new UnavailableError(message);
  if (error?.type === 'invalid_request') {
    return new UnavailableError(
      `${message} (${error.code}). The index${task.indexUid ? ` '${task.indexUid}'` : ''} is not as the ledger makes it; ` +
        '`ctx projections rebuild keyword` makes it anew, replacing what it holds',
      undefined,
      'CONFIG_ERROR',
    );
  }
  return new Error(message);
};

/** A request that enqueues a task, and what the task does, for its error. */
type TaskRequest = readonly [send: () => EnqueuedTaskPromise, what: string];

/** How often a task's status is asked for while it runs. */
const TASK_POLL_MS = 50;

/**
 * Keyword search on Meilisearch. The index is a projection fed at least once: documents are keyed
 * by chunk id and only ever replaced whole or deleted, so applying a batch twice is harmless, and
 * the checkpoint (in Postgres) moves only after Meilisearch reports every task of the batch
 * succeeded. A rebuild fills a shadow index and swaps it in atomically.
 */
export const createMeiliKeywordIndex = async ({
  client,
  db,
  content,
  keyword,
  indexUid = 'ctx_chunks',
  taskTimeoutMs = 120_000,
}: MeiliKeywordIndexOptions): Promise<{ projection: RunnableProjection; index: KeywordIndex }> => {
  // Named as the embedded keyword index is (`ctx projections rebuild keyword` in either mode); its
  // checkpoint keeps a name of its own, so that switching backends never reuses the other's.
  const { name, version } = keyword;
  const shadowUid = `${indexUid}__shadow`;
  const checkpoints = projectionCheckpoints(db, `${name}_meilisearch`, version);
  await checkpoints.register();

  /**
   * Asks `finished` until it answers, for at most the task timeout. Each ask is a request of its
   * own, bounded by the client's request timeout: the client's own wait passes its signal to its
   * polls, which then outlive that timeout, so a server that hangs held the projection for the
   * whole task timeout.
   */
  const poll = async <T>(taskUid: number, finished: () => Promise<T | undefined>): Promise<T> => {
    const deadline = Date.now() + taskTimeoutMs;
    for (;;) {
      const answer = await finished();
      if (answer !== undefined) return answer;
      if (Date.now() >= deadline) throw new MeilisearchTaskTimeOutError(taskUid, taskTimeoutMs);
      await new Promise((resolve) => setTimeout(resolve, TASK_POLL_MS));
    }
  };

  /** The task once it has run, or undefined while it waits or runs. */
  const finishedTask = async (taskUid: number): Promise<Task | undefined> => {
    const task = await client.tasks.getTask(taskUid);
    return task.status === 'enqueued' || task.status === 'processing' ? undefined : task;
  };

  const settled = async (enqueued: EnqueuedTask | EnqueuedTaskPromise): Promise<Task> => {
    const { taskUid } = await enqueued;
    return poll(taskUid, () => finishedTask(taskUid));
  };

  const succeeded = async (enqueued: EnqueuedTask | EnqueuedTaskPromise, what: string): Promise<void> => {
    let task;
    try {
      task = await settled(enqueued);
    } catch (error) {
      throw translateMeiliError(error);
    }
    if (task.status !== 'succeeded') throw taskFailure(task, what);
  };

  /**
   * Enqueues the tasks in order (Meilisearch runs one index's tasks in the order enqueued), then
   * waits for each: enqueued together, they may run as one batch, at one batch's fixed cost.
   */
  const allSucceeded = async (requests: readonly TaskRequest[]): Promise<void> => {
    const enqueued: [EnqueuedTask, string][] = [];
    try {
      for (const [send, what] of requests) enqueued.push([await send(), what]);
    } catch (error) {
      throw translateMeiliError(error);
    }
    for (const [task, what] of enqueued) await succeeded(task, what);
  };

  /**
   * Swaps the shadow index in. A key limited to the ledger's indexes (as docs/deployment.md
   * advises) never sees a swap's task, which belongs to no one index: the swap is then known done
   * once the live name holds the shadow's index, told by its creation time. A swap that fails
   * unseen times out, as an outage.
   */
  const swapShadowIn = async (): Promise<void> => {
    try {
      const { createdAt } = await client.index(shadowUid).getRawInfo();
      const { taskUid } = await client.swapIndexes([{ indexes: [indexUid, shadowUid], rename: false }]);
      const task = await poll(taskUid, () =>
        finishedTask(taskUid).catch(async (error: unknown) => {
          if (!hasCode(error, 'task_not_found')) throw error;
          const live = await client.index(indexUid).getRawInfo();
          return live.createdAt === createdAt ? null : undefined;
        }),
      );
      if (task && task.status !== 'succeeded') throw taskFailure(task, 'swap');
    } catch (error) {
      throw translateMeiliError(error);
    }
  };

  const prepared = new Set<string>();
  /** Creates the index with its settings, once per process (both are idempotent on the server). */
  const ensureIndex = async (uid: string) => {
    if (prepared.has(uid)) return;
    const created = await settled(client.createIndex(uid, { primaryKey: 'id' })).catch((error: unknown) => {
      throw translateMeiliError(error);
    });
    if (created.status === 'failed' && created.error?.code !== 'index_already_exists') {
      throw taskFailure(created, `creation of ${uid}`);
    }
    await succeeded(client.index(uid).updateSettings(CHUNK_INDEX_SETTINGS), `settings of ${uid}`);
    prepared.add(uid);
  };

  const sink = (uid: string, slot: 'live' | 'shadow'): ProjectionSink => ({
    checkpoint: () => checkpoints.read(slot),
    apply: async (events, from, to) => {
      if ((await checkpoints.read(slot)) !== from) {
        throw new CheckpointMovedError(`Checkpoint of '${name}' (${slot}) is no longer ${from}`);
      }
      const changes = lastChanges(keyword, events);
      if (changes.size > 0) {
        await ensureIndex(uid);
        const texts = await content.get([...changes.values()].flat().map((p) => p.chunk.textHash));
        const present = [...changes.values()].flat().filter((p) => texts.has(p.chunk.textHash));
        const { indexed, values } = await keyword.index(present, texts, []);
        const { additions, deletions } = planReplacement(
          new Map([...changes].map(([documentId, pending]) => [documentId, pending.map((p) => p.chunk)])),
          new Map(indexed.map((chunk, i) => [chunk.textHash, values[i]!])),
        );
        const index = client.index<MeiliChunkDocument>(uid);
        await allSucceeded(
          additions.map((documents) => [
            () => index.addDocuments(documents, { primaryKey: 'id' }),
            `add ${documents.length} chunks`,
          ]),
        );
        // Only once every addition succeeded: searches never see a document without its chunks.
        await allSucceeded(deletions.map((filter) => [() => index.deleteDocuments({ filter }), 'delete stale chunks']));
      }
      await db.transaction((tx) => checkpoints.advance(tx, slot, from, to));
    },
    quarantine: (event, error, from, to) => checkpoints.quarantine(slot, event, error, from, to),
  });

  const projection: RunnableProjection = {
    name,
    version,
    eventTypes: keyword.eventTypes,
    writesElsewhere: true,
    live: sink(indexUid, 'live'),
    liveVersion: () => checkpoints.liveVersion(),
    quarantined: () => checkpoints.quarantined(),
    openShadow: async (): Promise<ShadowSink> => {
      await client.deleteIndexIfExists(shadowUid).catch((error: unknown) => {
        throw translateMeiliError(error);
      });
      prepared.delete(shadowUid);
      await ensureIndex(shadowUid);
      await db.transaction((tx) => checkpoints.resetShadow(tx));
      return {
        ...sink(shadowUid, 'shadow'),
        promote: async () => {
          await ensureIndex(indexUid);
          await swapShadowIn();
          await db.transaction((tx) => checkpoints.promoteShadow(tx));
          // After the swap the shadow name holds the old index.
          await client.deleteIndexIfExists(shadowUid).catch(() => undefined);
          prepared.delete(shadowUid);
        },
        discard: async () => {
          await db.transaction((tx) => checkpoints.dropShadow(tx));
          await client.deleteIndexIfExists(shadowUid).catch(() => undefined);
          prepared.delete(shadowUid);
        },
      };
    },
  };

  const index: KeywordIndex = {
    async probe(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new UnavailableError(`Meilisearch did not answer within ${timeoutMs} ms`)), timeoutMs);
      });
      const answered = client
        .index(indexUid)
        .getRawInfo()
        .then(
          () => undefined,
          (error: unknown) => {
            // Answered, with the key accepted: the index is made with its first batch.
            if (hasCode(error, 'index_not_found')) return;
            throw translateMeiliError(error);
          },
        );
      try {
        await Promise.race([answered, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    /** The documents holding any of the query's words: the union of each word's matches, up to COUNT_PER_TERM chunks each. */
    async countDocuments(query, filters, among) {
      const terms = queryTerms(query);
      const bySource = new Map<string, number>();
      const matchedAmong = new Set<string>();
      if (terms.length === 0) return { bySource, among: matchedAmong };
      const filter = searchFilter(filters);
      try {
        // An index made by an earlier version gets the settings that show `source` and count rarity.
        await ensureIndex(indexUid);
        const { results } = await client.multiSearch<MultiSearchParams, MeiliChunkDocument>({
          queries: terms.map((term) => ({
            indexUid,
            q: term,
            filter,
            limit: COUNT_PER_TERM,
            matchingStrategy: 'all' as const,
            attributesToRetrieve: ['document_id', 'source'],
          })),
        });
        const sourceOf = new Map(results.flatMap((result) => result.hits.map((hit) => [hit.document_id, hit.source] as const)));
        const wanted = new Set(among);
        for (const [documentId, source] of sourceOf) {
          bySource.set(source, (bySource.get(source) ?? 0) + 1);
          if (wanted.has(documentId)) matchedAmong.add(documentId);
        }
        return { bySource, among: matchedAmong };
      } catch (error) {
        if (hasCode(error, 'index_not_found')) return { bySource, among: matchedAmong };
        throw translateMeiliError(error);
      }
    },
    async search(query, filters, limit): Promise<MeiliScoredChunk[]> {
      const terms = queryTerms(query);
      if (terms.length === 0) return [];
      const inProject = searchFilter({ project: filters.project });
      const filter = searchFilter(filters);
      const narrowed = filter !== inProject;
      const chunk = { indexUid, showRankingScore: true, attributesToRetrieve: ['id', 'document_id'] };
      try {
        // An index made by an earlier version gets the settings its rarity counts need.
        await ensureIndex(indexUid);
        const { results } = await client.multiSearch<MultiSearchParams, MeiliChunkDocument>({
          queries: [
            // How many chunks the project has, and (below) how many contain each word: rarity.
            { indexUid, q: '', filter: inProject, limit: 0 },
            ...terms.flatMap((term) => [
              {
                ...chunk,
                q: term,
                filter,
                limit: Math.max(limit, HITS_PER_TERM),
                matchingStrategy: 'all' as const,
              },
              ...(narrowed ? [{ indexUid, q: term, filter: inProject, limit: 0, matchingStrategy: 'all' as const }] : []),
            ]),
            // The whole query, for the highlighted crops of the chunks it finds.
            {
              ...chunk,
              q: query,
              filter,
              limit,
              matchingStrategy: 'frequency' as const,
              attributesToCrop: ['text'],
              cropLength: SNIPPET_WORDS,
              attributesToHighlight: ['text'],
              highlightPreTag: MATCH.pre,
              highlightPostTag: MATCH.post,
            },
          ],
        });
        const perTerm = narrowed ? 2 : 1;
        const ranked = rankByTerms(
          terms.map((_, i) => {
            const found = results[1 + i * perTerm]!;
            const counted = results[1 + i * perTerm + perTerm - 1]!;
            return { matching: counted.estimatedTotalHits ?? 0, hits: found.hits };
          }),
          results[0]!.estimatedTotalHits ?? 0,
        ).slice(0, limit);
        const crops = new Map(
          results.at(-1)!.hits.map((hit) => [hit.id, hit._formatted?.text] as const),
        );
        return ranked.map((hit) => {
          const crop = crops.get(hit.chunkId);
          return { ...hit, snippet: crop === undefined ? null : highlightWholeWords(crop) };
        });
      } catch (error) {
        if (hasCode(error, 'index_not_found')) return [];
        throw translateMeiliError(error);
      }
    },
  };
  return { projection, index };
};
