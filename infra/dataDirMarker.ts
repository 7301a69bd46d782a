import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DATABASE_DIR, LOCK_FILE, SECRETS_KEY_FILE, SERVER_FILE } from '../src/domain/ledgerFiles.js';

/**
 * A data directory holds the ledger's database and keys (`secrets.key`, `server.json`'s secret).
 * It is marked, when locked or its key made there, by a `.gitignore` that ignores everything in
 * it: git never commits it, and the ledger's scans never enter it (infra/connectors/filesystem.ts),
 * whatever their options, wherever it lies under a folder being ingested (`./.ctx`, the default,
 * under `ctx ingest .`).
 */
export const DATA_DIR_MARKER_FILE = '.gitignore';

const FIRST_LINE =
  '# A Context Ledger data directory: its database and keys. Never committed, never ingested.';

export const DATA_DIR_MARKER = `${FIRST_LINE}\n*\n`;

/** Whether a `.gitignore`'s content is the mark of a data directory. */
export const isDataDirMarker = (content: string): boolean => content.startsWith(FIRST_LINE);

/** What the ledger keeps in a data directory, drafts of its files included. */
const isLedgerEntry = (name: string): boolean =>
  [DATABASE_DIR, SECRETS_KEY_FILE].includes(name) || name.startsWith(LOCK_FILE) || name.startsWith(SERVER_FILE);

/**
 * Marks `dataDir` (which exists) when it holds nothing but the ledger's files: a folder of the
 * user's given as `--data-dir` (a project, say) is not made one that git and ingestion pass over.
 * A `.gitignore` already there, the mark or a user's own, is left as it is.
 */
export const markDataDir = (dataDir: string): void => {
  if (!readdirSync(dataDir).every(isLedgerEntry)) return;
  try {
    writeFileSync(path.join(dataDir, DATA_DIR_MARKER_FILE), DATA_DIR_MARKER, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
};
