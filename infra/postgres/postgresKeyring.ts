import type { SecretBox } from '../../src/ports/secretBox.js';
import { newId } from '../../src/domain/ids.js';
import {
  DataKeyMissingError,
  keyIdsOf,
  MasterKeyMismatchError,
  type Keyring,
} from '../../src/ports/keyring.js';
import { isSealedText } from '../../src/domain/protectedText.js';
import { newDataKey, openWith, sealWith } from '../crypto/sealing.js';
import type { Database } from './database.js';

// A forgotten key keeps its row with `wrapped` null, so that "forgotten" and "never known" differ.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS data_keys (
  key_id uuid PRIMARY KEY,
  tenant text NOT NULL,
  subject text NOT NULL,
  wrapped text,
  created_at timestamptz NOT NULL DEFAULT now(),
  forgotten_at timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS data_keys_live ON data_keys (tenant, subject) WHERE wrapped IS NOT NULL;
CREATE INDEX IF NOT EXISTS data_keys_subject ON data_keys (subject);`;

/** Rows hold no tenant as the empty string: a unique index treats nulls as distinct. */
const tenantKey = (tenant: string | null) => tenant ?? '';

const wrap = (box: SecretBox, key: Buffer): string => {
  const { secret } = box.seal({ secret: key.toString('hex') }) as { secret: { sealed: string } };
  return secret.sealed;
};

const unwrap = (box: SecretBox, wrapped: string): Buffer => {
  try {
    const { secret } = box.open({ secret: { sealed: wrapped } }) as { secret: string };
    return Buffer.from(secret, 'hex');
  } catch (error) {
    throw new MasterKeyMismatchError({ cause: error });
  }
};

type SealingKeys = Map<string, { keyId: string; key: Buffer }>;

/**
 * An embedded database has no other writer (its data directory is locked) and one keyring (built
 * once by the composition root), so there the key each author seals with can stay in memory until
 * it is forgotten; a server may be shared, so not there.
 */
const sealingKeysOf = (db: Database): SealingKeys | null => (db.engine === 'pglite' ? new Map() : null);

/** True when the key table holds any key, live or forgotten: data was sealed under the master key. */
export const hasDataKeys = async (db: Database): Promise<boolean> => {
  const [row] = await db.query<{ found: boolean }>(`SELECT to_regclass('data_keys') IS NOT NULL AS found`);
  if (!row?.found) return false;
  return (await db.query('SELECT 1 FROM data_keys LIMIT 1')).length > 0;
};

/** Data keys in Postgres (PGlite or a server), wrapped with the master key of `box`. */
export const createPostgresKeyring = async (db: Database, box: SecretBox): Promise<Keyring> => {
  await db.exec(SCHEMA);
  const sealingKeys = sealingKeysOf(db);
  const liveKeyOf = async (tenant: string, subject: string) => {
    const [row] = await db.query<{ key_id: string; wrapped: string }>(
      'SELECT key_id, wrapped FROM data_keys WHERE tenant = $1 AND subject = $2 AND wrapped IS NOT NULL',
      [tenant, subject],
    );
    return row;
  };

  return {
    async sealer(actor) {
      const tenant = tenantKey(actor.tenant);
      const cacheKey = `${tenant}\u0000${actor.subject}`;
      const cached = sealingKeys?.get(cacheKey);
      if (cached) return { seal: (text) => sealWith(cached.key, cached.keyId, text) };
      let row = await liveKeyOf(tenant, actor.subject);
      if (!row) {
        // Two writers may make the first key at once: the unique index keeps one, both use it.
        await db.query(
          `INSERT INTO data_keys (key_id, tenant, subject, wrapped) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant, subject) WHERE wrapped IS NOT NULL DO NOTHING`,
          [newId(), tenant, actor.subject, wrap(box, newDataKey())],
        );
        row = await liveKeyOf(tenant, actor.subject);
      }
      const { key_id: keyId, wrapped } = row!;
      const key = unwrap(box, wrapped);
      sealingKeys?.set(cacheKey, { keyId, key });
      return { seal: (text) => sealWith(key, keyId, text) };
    },
    async opener(values) {
      const ids = keyIdsOf(values);
      const rows = ids.length
        ? await db.query<{ key_id: string; wrapped: string | null }>(
            'SELECT key_id, wrapped FROM data_keys WHERE key_id = ANY($1::uuid[])',
            [ids],
          )
        : [];
      const keys = new Map(rows.map((r) => [r.key_id, r.wrapped === null ? null : unwrap(box, r.wrapped)]));
      return {
        open: (value) => {
          if (!isSealedText(value)) return value;
          const key = keys.get(value.keyId);
          if (key === undefined) throw new DataKeyMissingError(value.keyId);
          return key === null ? null : openWith(key, value);
        },
      };
    },
    async liveKeys(subject, tenant) {
      const rows = await db.query<{ key_id: string }>(
        `SELECT key_id FROM data_keys WHERE subject = $1 AND wrapped IS NOT NULL
           AND ($2::text IS NULL OR tenant = $2) ORDER BY created_at`,
        [subject, tenant],
      );
      return rows.map((r) => r.key_id);
    },
    async forget(keyIds) {
      const forgotten = new Set(keyIds);
      sealingKeys?.forEach((cached, author) => {
        if (forgotten.has(cached.keyId)) sealingKeys.delete(author);
      });
      const rows = keyIds.length
        ? await db.query(
            `UPDATE data_keys SET wrapped = NULL, forgotten_at = now()
             WHERE key_id = ANY($1::uuid[]) AND wrapped IS NOT NULL RETURNING key_id`,
            [keyIds],
          )
        : [];
      // A row's earlier version, wrapped key and all, stays in the table's pages and the log until
      // purged; also when nothing is left to forget, as an earlier forgetting may have stopped short.
      await db.purge(['data_keys']);
      return rows.length;
    },
  };
};

interface KeyTable {
  db: Database;
  box: SecretBox;
}

/**
 * Copies every data key into another ledger's key table, unwrapped with the source's master key
 * and wrapped again with the destination's; forgotten keys stay forgotten. Keys already there stay
 * as they are. Answers how many keys were copied.
 */
export const copyDataKeys = async (from: KeyTable, to: KeyTable): Promise<number> => {
  await to.db.exec(SCHEMA);
  const found = await from.db.query<{ found: boolean }>(
    `SELECT to_regclass('data_keys') IS NOT NULL AS found`,
  );
  if (!found[0]?.found) return 0;
  const rows = await from.db.query<{
    key_id: string;
    tenant: string;
    subject: string;
    wrapped: string | null;
    created_at: string;
    forgotten_at: string | null;
  }>('SELECT key_id, tenant, subject, wrapped, created_at::text, forgotten_at::text FROM data_keys');
  if (rows.length === 0) return 0;
  const copies = rows.map((row) => ({
    ...row,
    wrapped: row.wrapped === null ? null : wrap(to.box, unwrap(from.box, row.wrapped)),
  }));
  const inserted = await to.db.query(
    `INSERT INTO data_keys (key_id, tenant, subject, wrapped, created_at, forgotten_at)
     SELECT x.key_id, x.tenant, x.subject, x.wrapped, x.created_at, x.forgotten_at
     FROM jsonb_to_recordset($1::jsonb) AS x(key_id uuid, tenant text, subject text, wrapped text,
       created_at timestamptz, forgotten_at timestamptz)
     ON CONFLICT DO NOTHING RETURNING key_id`,
    [JSON.stringify(copies)],
  );
  return inserted.length;
};
