import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { openLedger, type Ledger } from '../../src/main.js';
import { testModelDir } from './requirements.js';

export const tempDataDir = (prefix = 'ctx-test-') => mkdtempSync(path.join(tmpdir(), prefix));

/** Tests make the repositories they ingest in the run's temporary folder: ingestion may read there. */
export const tempRootsEnv = (): NodeJS.ProcessEnv => ({ CTX_INGEST__ROOTS: tmpdir() });

/** The real embedding model when this machine has one (see requirements.ts), keyword search only otherwise. */
export const modelEnv = (): NodeJS.ProcessEnv =>
  testModelDir ? { CTX_EMBEDDINGS__MODEL_DIR: testModelDir } : { CTX_EMBEDDINGS__PROVIDER: 'none' };

/** Tests reach every tool over MCP, not only the default toolset. */
export const EVERY_TOOLSET: NodeJS.ProcessEnv = { CTX_MCP__TOOLSETS: 'all' };

/**
 * Rate limits are per tenant, and a spec's tests mostly share one: those not about rate limits run
 * with the index, connectors and config budgets lifted (search keeps the REST API's 100 a minute).
 */
export const LIFTED_RATE_LIMITS: NodeJS.ProcessEnv = {
  CTX_SERVER__INDEX_PER_MINUTE: '100000',
  CTX_SERVER__CONNECTORS_PER_MINUTE: '100000',
  CTX_SERVER__CONFIG_PER_MINUTE: '100000',
};

/** The REST API's budgets, for the specs about rate limits. */
export const SEED_RATE_LIMITS: NodeJS.ProcessEnv = {
  CTX_SERVER__INDEX_PER_MINUTE: '10',
  CTX_SERVER__CONNECTORS_PER_MINUTE: '20',
  CTX_SERVER__CONFIG_PER_MINUTE: '5',
};

/** A real ledger on a fresh embedded data directory, bound to an ephemeral loopback port. */
export const openTestLedger = (env: NodeJS.ProcessEnv = {}, file?: string): Promise<Ledger> =>
  openLedger(
    loadConfig({
      file,
      env: { ...modelEnv(), ...tempRootsEnv(), ...EVERY_TOOLSET, ...LIFTED_RATE_LIMITS, ...env },
      overrides: { storage: { dataDir: tempDataDir() }, server: { bind: '127.0.0.1:0' } },
    }),
    { logger: pino({ level: 'silent' }) },
  );
