import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadScifact, ingestCorpus } from '../eval/scifact.js';
import { loadConfig } from '../src/config.js';
import { openLedger } from '../src/main.js';

/**
 * Indexing with embeddings: ingests SciFact abstracts into a fresh embedded ledger with the local
 * model and waits until every read model (the semantic index included) has caught up. Prints
 * documents/s and the process's peak resident memory (worker threads included).
 * BENCH_SCIFACT_DIR names the corpus folder (default: eval's); BENCH_EMBED_DOCS limits the documents (default: all 5,183); CTX_EMBEDDINGS__WEIGHTS=q8 runs the
 * int8 weights, CTX_EMBEDDINGS__THREADS the threads per forward pass, CTX_EMBEDDINGS__BATCH_SIZE the batch.
 */
export async function run(): Promise<void> {
  const corpus = process.env.BENCH_SCIFACT_DIR ? loadScifact(process.env.BENCH_SCIFACT_DIR) : loadScifact();
  const limit = Number(process.env.BENCH_EMBED_DOCS ?? corpus.documents.length);
  const documents = corpus.documents.slice(0, limit);
  const config = loadConfig({
    env: { CTX_LOG__LEVEL: 'silent', ...process.env },
    overrides: { storage: { dataDir: mkdtempSync(path.join(tmpdir(), 'ctx-bench-embed-')) } },
  });
  const ledger = await openLedger(config, { logger: pino({ level: 'silent' }) });
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);
  try {
    console.log(`load average before ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const seconds = await ingestCorpus(ledger, { ...corpus, documents });
    const { embeddings } = config;
    console.log(
      `SciFact, ${documents.length} documents, ${embeddings.model} (weights ${embeddings.weights}, threads ${embeddings.threads ?? 'default'}, batch ${embeddings.batchSize}): ` +
        `${seconds.toFixed(1)} s = ${(documents.length / seconds).toFixed(1)} documents/s (target >= 30); ` +
        `peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB; load average after ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    );
  } finally {
    clearInterval(sampler);
    await ledger.close();
  }
}
