import { randomUUID } from 'node:crypto';

/**
 * Rankings kept for the pages after the first. A cursor names the ranking its first page was cut
 * from, so every later page is cut from that same ranking: documents written, re-indexed or
 * removed in between neither repeat a result nor push one out of sight. Kept in memory, the least
 * recently used beyond `capacity` and any older than `ttlMs` are forgotten; a cursor to a
 * forgotten ranking is refused, and the search starts again.
 */
export interface PinnedRankings<T> {
  /** Keeps `ranking` for `owner` (who may read it back) and returns its id. */
  pin(owner: string, ranking: readonly T[]): string;
  /** The ranking `id` names, if it is still kept and was pinned by `owner`. */
  get(id: string, owner: string): readonly T[] | undefined;
}

export const createPinnedRankings = <T>({
  capacity = 256,
  ttlMs = 15 * 60_000,
  now = Date.now,
}: { capacity?: number; ttlMs?: number; now?: () => number } = {}): PinnedRankings<T> => {
  const kept = new Map<string, { owner: string; ranking: readonly T[]; pinnedAt: number }>();
  return {
    pin(owner, ranking) {
      const id = randomUUID();
      kept.set(id, { owner, ranking, pinnedAt: now() });
      // A Map iterates in insertion order: the first keys are the least recently used.
      for (const key of kept.keys()) {
        if (kept.size <= capacity) break;
        kept.delete(key);
      }
      return id;
    },
    get(id, owner) {
      const entry = kept.get(id);
      if (!entry || entry.owner !== owner) return undefined;
      if (now() - entry.pinnedAt > ttlMs) {
        kept.delete(id);
        return undefined;
      }
      kept.delete(id);
      kept.set(id, entry);
      return entry.ranking;
    },
  };
};
