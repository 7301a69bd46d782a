import { randomUUID } from 'node:crypto';
import type { Database } from '../../src/ports/database.js';
import type { Pinned, PinnedRankings } from '../../src/ports/pinnedRankings.js';

/** Pinned rankings in a table of their own, shared by every replica on the database. */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS search_pinned_rankings (
  id uuid PRIMARY KEY,
  owner text NOT NULL,
  pinned jsonb NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS search_pinned_rankings_expires_at ON search_pinned_rankings (expires_at);`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const createPinnedRankings = async <T>(
  db: Database,
  { ttlMs = 15 * 60_000, now = Date.now }: { ttlMs?: number; now?: () => number } = {},
): Promise<PinnedRankings<T>> => {
  await db.exec(SCHEMA);
  const at = (ms: number) => new Date(ms).toISOString();
  return {
    async pin(owner, pinned) {
      const id = randomUUID();
      // One statement: expired rankings go as a new one is pinned.
      await db.query(
        `WITH expired AS (DELETE FROM search_pinned_rankings WHERE expires_at <= $5)
         INSERT INTO search_pinned_rankings (id, owner, pinned, expires_at) VALUES ($1, $2, $3, $4)`,
        [id, owner, JSON.stringify(pinned), at(now() + ttlMs), at(now())],
      );
      return id;
    },
    async get(id, owner) {
      if (!UUID.test(id)) return undefined;
      const [row] = await db.query<{ pinned: Pinned<T> | string }>(
        'SELECT pinned FROM search_pinned_rankings WHERE id = $1 AND owner = $2 AND expires_at > $3',
        [id, owner, at(now())],
      );
      if (!row) return undefined;
      return typeof row.pinned === 'string' ? (JSON.parse(row.pinned) as Pinned<T>) : row.pinned;
    },
  };
};
