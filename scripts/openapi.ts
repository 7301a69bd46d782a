/**
 * Writes `openapi.json` (the `/api/v1` OpenAPI document generated from the zod schemas), or with
 * `--check` fails when the committed file differs from what the code generates.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { buildOpenApiDocument } from '../src/http/api/openApiDocument.js';
import { PRODUCT_VERSION } from '../src/http/api/version.js';
import { openLedger } from '../src/main.js';

/** The catalogue as a deployment with the default configuration has it, in a throwaway data directory. */
const defaultCatalogue = async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ctx-openapi-'));
  try {
    const config = loadConfig({ env: { CTX_EMBEDDINGS__PROVIDER: 'none' }, overrides: { storage: { dataDir } } });
    const ledger = await openLedger(config, { logger: pino({ level: 'silent' }) });
    const operations = ledger.operations();
    await ledger.close();
    return operations;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
};

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'openapi.json');
const generated = `${JSON.stringify(buildOpenApiDocument(PRODUCT_VERSION, await defaultCatalogue()), null, 2)}\n`;

if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    // a missing file differs like any other
  }
  if (committed !== generated) {
    console.error('openapi.json is out of date: run `npx tsx scripts/openapi.ts` and commit the result');
    process.exit(1);
  }
  console.log('openapi.json is up to date');
} else {
  writeFileSync(file, generated);
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
}
