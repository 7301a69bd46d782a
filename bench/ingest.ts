import path from 'node:path';
import { pino } from 'pino';
import { scanFilesystem, type ScannedFile, type SkippedFile } from '../infra/connectors/index.js';
import { loadConfig } from '../src/config.js';
import { openLedger } from '../src/main.js';
import { ingestFiles } from '../src/ingestion/ingestFiles.js';
import { commandContext } from '../src/engine/commands.js';
import { treeSitterChunker } from '../infra/chunking/chunker.js';
import { scratchDir } from './scratchDir.js';

/**
 * Ingests a large real code tree (this repository's node_modules unless CTX_BENCH_TREE names
 * another) and prints files/s and chunks/s for ingestion and for indexing, without embeddings and
 * with them (when CTX_EMBEDDINGS__MODEL_DIR names a model), plus the peak memory.
 */
const TREE = process.env.CTX_BENCH_TREE ?? path.resolve(import.meta.dirname, '../node_modules');
const FILES_KEYWORD = Number(process.env.CTX_BENCH_FILES ?? 3000);
const FILES_EMBEDDED = Number(process.env.CTX_BENCH_FILES_EMBEDDED ?? 300);

async function* firstFiles(limit: number): AsyncGenerator<ScannedFile | SkippedFile> {
  let count = 0;
  for await (const file of scanFilesystem({ roots: [TREE], exclude: [], include: ['**/*.{ts,js,mjs,md,json,py}'] })) {
    if (file.status === 'skipped' && file.reason === 'excluded') continue;
    yield file;
    if (++count >= limit) return;
  }
}

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);

const measure = async (label: string, files: number, embeddings: boolean) => {
  const dataDir = scratchDir('ctx-bench-ingest-');
  const env = embeddings ? process.env : { ...process.env, CTX_EMBEDDINGS__PROVIDER: 'none' };
  const ledger = await openLedger(loadConfig({ env, overrides: { storage: { dataDir } } }), {
    logger: pino({ level: 'warn' }),
  });
  try {
    const deps = { store: ledger.store, content: ledger.content, chunker: treeSitterChunker };
    const started = performance.now();
    const result = await ingestFiles(deps, firstFiles(files), {
      source: 'bench',
      context: commandContext({ subject: 'bench', tenant: null, via: 'cli' }),
    });
    const ingestSeconds = (performance.now() - started) / 1000;
    const indexStarted = performance.now();
    await ledger.catchUp();
    const indexSeconds = (performance.now() - indexStarted) / 1000;
    const total = (performance.now() - started) / 1000;
    const ingested = result.created + result.updated + result.unchanged;
    console.log(
      `${label.padEnd(18)} ${String(ingested).padStart(6)} files ${String(result.chunks).padStart(7)} chunks | ` +
        `ingest ${(ingested / ingestSeconds).toFixed(0).padStart(5)} files/s ${(result.chunks / ingestSeconds).toFixed(0).padStart(6)} chunks/s | ` +
        `indexing ${indexSeconds.toFixed(1).padStart(6)} s (${(result.chunks / indexSeconds).toFixed(0)} chunks/s) | ` +
        `total ${total.toFixed(1)} s, ${result.skipped} skipped, ${result.failed} failed`,
    );
  } finally {
    await ledger.close();
  }
};

export async function run(): Promise<void> {
  console.log(`tree: ${TREE}`);
  await measure('keyword only', FILES_KEYWORD, false);
  if (process.env.CTX_EMBEDDINGS__MODEL_DIR) await measure('with embeddings', FILES_EMBEDDED, true);
  else console.log('with embeddings: skipped (set CTX_EMBEDDINGS__MODEL_DIR)');
  clearInterval(sampler);
  console.log(`peak memory (RSS): ${(peakRss / 1024 / 1024).toFixed(0)} MiB`);
}
