/** A ranking kept for the pages after the first. */
export interface Pinned<T> {
  ranking: readonly T[];
}

/**
 * Rankings kept for the pages after the first. A cursor names the ranking its first page was cut
 * from, so every later page is cut from that same ranking: documents written, re-indexed or
 * removed in between neither repeat a result nor push one out of sight. Kept in the database, so a
 * cursor outlives a restart and any replica on the same database answers it; those older than
 * `ttlMs` are forgotten (pruned whenever one is pinned), and a cursor to one is refused.
 */
export interface PinnedRankings<T> {
  /** Keeps `pinned` for `owner` (who may read it back) and returns its id. */
  pin(owner: string, pinned: Pinned<T>): Promise<string>;
  /** The ranking `id` names, if it is still kept and was pinned by `owner`. */
  get(id: string, owner: string): Promise<Pinned<T> | undefined>;
}
