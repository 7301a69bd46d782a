import type { StoredEvent } from '../../src/domain/events.js';
import { START, type Position } from '../../src/domain/position.js';
import { toStorableText } from '../../src/domain/text.js';
import { CheckpointMovedError, type QuarantinedEvent } from '../../src/ports/projections.js';
import type { Sql } from '../../src/ports/database.js';
import type { Database } from './database.js';

type Slot = 'live' | 'shadow';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS projection_checkpoints (
  name text NOT NULL,
  slot text NOT NULL CHECK (slot IN ('live', 'shadow')),
  version integer NOT NULL,
  position text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name, slot)
);
CREATE TABLE IF NOT EXISTS projection_quarantine (
  name text NOT NULL,
  slot text NOT NULL CHECK (slot IN ('live', 'shadow')),
  position text NOT NULL,
  event_type text NOT NULL,
  stream_id text NOT NULL,
  error text NOT NULL,
  quarantined_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name, slot, position)
);`;

/**
 * Checkpoints of Postgres read models, stored beside them so that a batch and its checkpoint
 * commit together. `live` is what queries read; `shadow` is a rebuild in progress.
 */
export const projectionCheckpoints = (db: Database, name: string, version: number) => ({
  /** Creates the live checkpoint at the start, unless the projection was built before. */
  async register(): Promise<void> {
    await db.exec(SCHEMA);
    await db.query(
      `INSERT INTO projection_checkpoints (name, slot, version, position) VALUES ($1, 'live', $2, $3)
       ON CONFLICT DO NOTHING`,
      [name, version, START],
    );
  },

  async read(slot: Slot): Promise<Position> {
    const [row] = await db.query<{ position: Position }>(
      'SELECT position FROM projection_checkpoints WHERE name = $1 AND slot = $2',
      [name, slot],
    );
    return row?.position ?? START;
  },

  /** Compare-and-set, so two runners never both apply one batch. */
  async advance(tx: Sql, slot: Slot, from: Position, to: Position): Promise<void> {
    const params: unknown[] = [];
    const moved = await tx.query(`WITH ${this.movedCte(slot, from, to, params)} SELECT 1 FROM moved`, params);
    if (moved.length === 0) throw this.movedError(slot, from);
  },

  /**
   * The compare-and-set as a CTE named `moved`, one row when it moved the checkpoint: a statement
   * can write its batch only then, in one round trip. Adds its four parameters to `params`.
   */
  movedCte(slot: Slot, from: Position, to: Position, params: unknown[]): string {
    const at = params.push(name, slot, from, to) - 4;
    return `moved AS (UPDATE projection_checkpoints SET position = $${at + 4}, updated_at = now()
      WHERE name = $${at + 1} AND slot = $${at + 2} AND position = $${at + 3} RETURNING 1)`;
  },

  /** Moves the checkpoint past `event` and records it as quarantined, in one transaction. */
  async quarantine(slot: Slot, event: StoredEvent, error: string, from: Position, to: Position): Promise<void> {
    await db.transaction(async (tx) => {
      await this.advance(tx, slot, from, to);
      await tx.query(
        `INSERT INTO projection_quarantine (name, slot, position, event_type, stream_id, error) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (name, slot, position) DO UPDATE SET error = excluded.error, quarantined_at = now()`,
        // The message may quote the very text that could not be stored.
        [name, slot, event.position, event.type, toStorableText(event.streamId), toStorableText(error)],
      );
    });
  },

  async quarantined(slot: Slot = 'live'): Promise<QuarantinedEvent[]> {
    const rows = await db.query<{ position: Position; event_type: string; stream_id: string; error: string; at: string }>(
      `SELECT position, event_type, stream_id, error, to_char(quarantined_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at
       FROM projection_quarantine WHERE name = $1 AND slot = $2 ORDER BY position`,
      [name, slot],
    );
    return rows.map((r) => ({
      position: r.position,
      eventType: r.event_type,
      streamId: r.stream_id,
      error: r.error,
      quarantinedAt: r.at,
    }));
  },

  movedError: (slot: Slot, from: Position) =>
    new CheckpointMovedError(`Checkpoint of '${name}' (${slot}) is no longer ${from}`),

  async liveVersion(): Promise<number | null> {
    const [row] = await db.query<{ version: number }>(
      `SELECT version FROM projection_checkpoints WHERE name = $1 AND slot = 'live'`,
      [name],
    );
    return row?.version ?? null;
  },

  async resetShadow(tx: Sql): Promise<void> {
    await tx.query(
      `INSERT INTO projection_checkpoints (name, slot, version, position) VALUES ($1, 'shadow', $2, $3)
       ON CONFLICT (name, slot) DO UPDATE SET version = excluded.version, position = excluded.position`,
      [name, version, START],
    );
    await tx.query(`DELETE FROM projection_quarantine WHERE name = $1 AND slot = 'shadow'`, [name]);
  },

  /** Inside the swap transaction: the shadow's checkpoint and version become the live ones. */
  async promoteShadow(tx: Sql): Promise<void> {
    await tx.query(
      `UPDATE projection_checkpoints AS l SET version = s.version, position = s.position, updated_at = now()
       FROM projection_checkpoints AS s
       WHERE l.name = $1 AND l.slot = 'live' AND s.name = $1 AND s.slot = 'shadow'`,
      [name],
    );
    // The rebuilt read model met every event again: its quarantine replaces the old one.
    await tx.query(`DELETE FROM projection_quarantine WHERE name = $1 AND slot = 'live'`, [name]);
    await tx.query(`UPDATE projection_quarantine SET slot = 'live' WHERE name = $1 AND slot = 'shadow'`, [name]);
    await this.dropShadow(tx);
  },

  async dropShadow(tx: Sql): Promise<void> {
    await tx.query(`DELETE FROM projection_checkpoints WHERE name = $1 AND slot = 'shadow'`, [name]);
    await tx.query(`DELETE FROM projection_quarantine WHERE name = $1 AND slot = 'shadow'`, [name]);
  },
});

export type ProjectionCheckpoints = ReturnType<typeof projectionCheckpoints>;

/** The checkpoint of a projection, for tests and tools that look from outside the runner. */
export const readLiveCheckpoint = (db: Database, name: string) => projectionCheckpoints(db, name, 0).read('live');
