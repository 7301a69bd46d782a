import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { openLedger, type Ledger } from '../../src/main.js';

export const tempDataDir = (prefix = 'ctx-test-') => mkdtempSync(path.join(tmpdir(), prefix));

/** Tests make the repositories they ingest in the run's temporary folder: ingestion may read there. */
export const tempRootsEnv = (): NodeJS.ProcessEnv => ({ CTX_INGEST__ROOTS: tmpdir() });

/** The embedding model folder the environment names (CI fetches one), so tests use the real model. */
export const modelEnv = (): NodeJS.ProcessEnv =>
  process.env.CTX_EMBEDDINGS__MODEL_DIR
    ? { CTX_EMBEDDINGS__MODEL_DIR: process.env.CTX_EMBEDDINGS__MODEL_DIR }
    : { CTX_EMBEDDINGS__PROVIDER: 'none' };

/** A real ledger on a fresh embedded data directory, bound to an ephemeral loopback port. */
export const openTestLedger = (env: NodeJS.ProcessEnv = {}, file?: string): Promise<Ledger> =>
  openLedger(
    loadConfig({
      file,
      env: { ...modelEnv(), ...tempRootsEnv(), ...env },
      overrides: { storage: { dataDir: tempDataDir() }, server: { bind: '127.0.0.1:0' } },
    }),
    { logger: pino({ level: 'silent' }) },
  );
