import { evolveDocumentView, type DocumentView } from '../../src/domain/documentView.js';
import { SEARCH_EVENT_TYPES } from '../../src/domain/searchChunks.js';
import { streamId, type StoredEvent } from '../../src/domain/events.js';
import { position, positionParts, START, type Position } from '../../src/domain/position.js';
import { applyBatch } from '../../src/engine/applyBatch.js';
import { loadAggregateAsOf } from '../../src/engine/asOf.js';
import { parseAsOf } from '../../src/domain/asOf.js';
import { UnavailableError, ValidationError } from '../../src/errors.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import type { Logger } from '../../src/ports/logger.js';
import type { ProjectionSink } from '../../src/ports/projections.js';
import type { KeywordIndex, VectorIndex } from '../../src/ports/searchIndex.js';

/** A search index being built apart from the live one, by the live projection's own code. */
export interface IndexSnapshot<Index> {
  /** Fed every search event up to the position, in order. */
  sink: ProjectionSink;
  /** After the last batch: whatever is best built in bulk. */
  seal(): Promise<void>;
  index: Index;
}

/** A place (a temporary schema) holding the indexes of one past position. */
export interface AsOfSpace {
  keyword(): Promise<IndexSnapshot<KeywordIndex>>;
  semantic(): Promise<IndexSnapshot<VectorIndex>>;
  drop(): Promise<void>;
}

export type SearchModel = 'keyword' | 'semantic';
interface Indexes {
  keyword: KeywordIndex;
  semantic: VectorIndex;
}

/** What a search ranking reads: the indexes its mode needs, and the documents their hits belong to. */
export interface SearchView {
  keyword: KeywordIndex | null;
  semantic: VectorIndex | null;
  /** The documents of `ids`, each with at least the chunks of `chunkIds` it has. */
  documents(ids: readonly string[], chunkIds: readonly string[]): Promise<Map<string, DocumentView>>;
}

export interface AsOfBuildProgress extends Record<string, unknown> {
  model: SearchModel;
  position: Position;
  processedEvents: number;
}

export interface SearchAsOf {
  /**
   * Runs `work` on the indexes as they were at `asOf` (a position or an ISO timestamp), building
   * the ones not yet built for that position. Concurrent callers for one position share one build.
   */
  use<T>(
    asOf: string,
    models: readonly SearchModel[],
    work: (view: SearchView) => Promise<T>,
    onProgress?: (progress: AsOfBuildProgress) => void,
  ): Promise<T>;
  /**
   * Drops the indexes built before the last forgetting, which hold copies of the forgotten text;
   * those in use, once their searches end.
   */
  discardForgotten(): Promise<void>;
  /** Stops building and drops every built index. */
  close(): Promise<void>;
}

export interface SearchAsOfOptions {
  store: EventStore;
  openSpace: () => Promise<AsOfSpace>;
  /** Positions whose indexes are kept once unused; the least recently used beyond this are dropped. */
  capacity: number;
  batchSize: number;
  /** Why keyword indexes cannot be built as of a past position in this deployment, if they cannot. */
  keywordUnavailable?: string;
  logger: Logger;
}

interface Entry {
  position: Position;
  /** The last forget this entry's indexes honour: a later one makes them stale. */
  forgetsUpTo: Position;
  space: Promise<AsOfSpace>;
  builds: Map<SearchModel, Promise<Indexes[SearchModel]>>;
  users: number;
  lastUsed: number;
  /** Out of the cache (a build failed): dropped once its last user is done. */
  retired: boolean;
  listeners: Set<(progress: AsOfBuildProgress) => void>;
}

const SEARCH_EVENTS = { eventTypes: SEARCH_EVENT_TYPES };
/** Forgetting reaches back in time: a past view never shows what has since been forgotten. */
const FORGETS = { eventTypes: ['DocumentForgotten' as const] };

const DOCUMENT_FOLD = {
  initialState: (): DocumentView | null => null,
  evolve: evolveDocumentView,
};

/** The bound just past `p` for reading backwards from it inclusively (`from` is exclusive). */
const justAfter = (p: Position): Position => {
  const [major, minor] = positionParts(p);
  return position(major, minor + 1n);
};

export const createSearchAsOf = ({
  store,
  openSpace,
  capacity,
  batchSize,
  keywordUnavailable,
  logger,
}: SearchAsOfOptions): SearchAsOf => {
  const entries = new Map<Position, Entry>();
  let closing = false;

  /**
   * The last search event at or before `asOf`: positions in between answer the same, so they share
   * one cache entry. A position beyond the head is an error; a timestamp is any moment.
   */
  const resolve = async (raw: string): Promise<Position> => {
    const asOf = parseAsOf(raw);
    if ('position' in asOf) {
      const head = await store.headPosition();
      if (asOf.position > head) {
        throw new ValidationError(
          `as-of position ${asOf.position} is beyond the head of the ledger (${head})`,
          {
            head,
          },
        );
      }
    }
    const [last] = await store.readAll({
      ...('position' in asOf ? { from: justAfter(asOf.position) } : {}),
      direction: 'backwards',
      maxCount: 1,
      filter: { ...SEARCH_EVENTS, ...('timestamp' in asOf ? { until: asOf.timestamp } : {}) },
    });
    return last?.position ?? START;
  };

  /** Feeds the snapshot every search event up to `to`, batch by batch, as the runner feeds a shadow. */
  const fill = async <Index>(
    entry: Entry,
    model: SearchModel,
    snapshot: IndexSnapshot<Index>,
  ): Promise<Index> => {
    let checkpoint = START;
    let processedEvents = 0;
    // As the live index does, the snapshot goes past an event it can never apply.
    const skip = (event: StoredEvent, error: string) =>
      logger.warn({ model, position: event.position, eventType: event.type, error }, 'as-of index skipped an event it cannot apply');
    for (;;) {
      if (closing) throw new UnavailableError('The ledger is closing');
      const page = await store.readAll({ from: checkpoint, maxCount: batchSize, filter: SEARCH_EVENTS });
      const events = page.filter((event) => event.position <= entry.position);
      if (events.length > 0) {
        const to = events[events.length - 1]!.position;
        checkpoint = await applyBatch(snapshot.sink, events, checkpoint, to, skip);
        processedEvents += events.length;
        const progress = { model, position: entry.position, processedEvents };
        entry.listeners.forEach((listener) => listener(progress));
      }
      if (events.length < batchSize) break;
    }
    for (;;) {
      const forgets = await store.readAll({ from: checkpoint, maxCount: batchSize, filter: FORGETS });
      if (forgets.length === 0) break;
      const to = forgets[forgets.length - 1]!.position;
      checkpoint = await applyBatch(snapshot.sink, forgets, checkpoint, to, skip);
    }
    await snapshot.seal();
    return snapshot.index;
  };

  const discard = async (entry: Entry) => {
    await Promise.allSettled(entry.builds.values());
    const space = await entry.space.catch(() => null);
    await space?.drop().catch((error: unknown) => {
      logger.warn(
        { position: entry.position, error: (error as Error).message },
        'could not drop an as-of search index',
      );
    });
  };

  const retire = (entry: Entry) => {
    if (entries.get(entry.position) === entry) entries.delete(entry.position);
    entry.retired = true;
  };

  const build = async (entry: Entry, model: SearchModel): Promise<Indexes[SearchModel]> => {
    const started = Date.now();
    try {
      const space = await entry.space;
      const snapshot: IndexSnapshot<Indexes[SearchModel]> =
        model === 'keyword' ? await space.keyword() : await space.semantic();
      const index = await fill(entry, model, snapshot);
      logger.info(
        { model, position: entry.position, ms: Date.now() - started },
        'built a search index as of a past position',
      );
      return index;
    } catch (error) {
      retire(entry);
      throw error;
    }
  };

  const indexOf = <M extends SearchModel>(entry: Entry, model: M): Promise<Indexes[M]> => {
    let building = entry.builds.get(model);
    if (!building) {
      building = build(entry, model);
      entry.builds.set(model, building);
    }
    return building as Promise<Indexes[M]>;
  };

  /** Drops the least recently used idle entries beyond the capacity. */
  const trim = async () => {
    const idle = [...entries.values()].filter((e) => e.users === 0).sort((a, b) => a.lastUsed - b.lastUsed);
    const excess = entries.size - capacity;
    for (const entry of idle.slice(0, Math.max(0, excess))) {
      retire(entry);
      await discard(entry);
    }
  };

  const documentsAt =
    (at: Position) =>
    async (ids: readonly string[]): Promise<Map<string, DocumentView>> => {
      const folded = await Promise.all(
        ids.map(
          async (id) =>
            (await loadAggregateAsOf(store, streamId('doc', id), DOCUMENT_FOLD, { position: at })).state,
        ),
      );
      return new Map(folded.filter((doc) => doc !== null).map((doc) => [doc.id, doc]));
    };

  const lastForget = async (): Promise<Position> =>
    (await store.readAll({ direction: 'backwards', maxCount: 1, filter: FORGETS }))[0]?.position ?? START;

  const discardStale = async (forgetsUpTo: Position) => {
    for (const entry of [...entries.values()]) {
      if (entry.forgetsUpTo >= forgetsUpTo) continue;
      retire(entry);
      if (entry.users === 0) await discard(entry);
    }
  };

  return {
    async use(asOf, models, work, onProgress) {
      if (closing) throw new UnavailableError('The ledger is closing');
      if (keywordUnavailable && models.includes('keyword')) throw new ValidationError(keywordUnavailable);
      const [at, forgetsUpTo] = await Promise.all([resolve(asOf), lastForget()]);
      await discardStale(forgetsUpTo);
      let entry = entries.get(at);
      if (!entry) {
        entry = {
          position: at,
          forgetsUpTo,
          space: openSpace(),
          builds: new Map(),
          users: 0,
          lastUsed: Date.now(),
          retired: false,
          listeners: new Set(),
        };
        entries.set(at, entry);
      }
      entry.users++;
      if (onProgress) entry.listeners.add(onProgress);
      try {
        const [keyword, semantic] = await Promise.all([
          models.includes('keyword') ? indexOf(entry, 'keyword') : null,
          models.includes('semantic') ? indexOf(entry, 'semantic') : null,
        ]);
        return await work({ keyword, semantic, documents: documentsAt(at) });
      } finally {
        if (onProgress) entry.listeners.delete(onProgress);
        entry.users--;
        entry.lastUsed = Date.now();
        if (entry.retired && entry.users === 0) await discard(entry);
        else await trim();
      }
    },
    discardForgotten: async () => discardStale(await lastForget()),
    async close() {
      closing = true;
      const all = [...entries.values()];
      entries.clear();
      await Promise.all(all.map(discard));
    },
  };
};
