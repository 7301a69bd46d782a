import { loadavg } from 'node:os';
import { pino } from 'pino';
import { loadScifact, ingestCorpus } from '../eval/scifact.js';
import { loadConfig } from '../src/config.js';
import { openLedger, type Ledger } from '../src/main.js';
import { semanticPassage } from '../src/domain/searchChunks.js';
import type { DocumentView } from '../src/domain/documentView.js';
import { localEmbedderFromConfig } from '../src/modules/embedderFromConfig.js';
import { scratchDir } from './scratchDir.js';

/**
 * Indexing with embeddings: ingests SciFact abstracts into a fresh embedded ledger with the local
 * model and waits until every read model (the semantic index included) has caught up. Prints
 * documents/s and the process's peak resident memory (worker threads included).
 * BENCH_SCIFACT_DIR names the corpus folder (default: eval's); BENCH_EMBED_DOCS limits the documents (default: all 5,183); CTX_EMBEDDINGS__WEIGHTS=q8 runs the
 * int8 weights, CTX_EMBEDDINGS__THREADS the threads per forward pass, CTX_EMBEDDINGS__BATCH_SIZE the batch.
 * Then the model alone embeds the same passages (each chunk under its title, as the semantic index
 * embeds it) in the same batches, in a worker as the product runs it but without the ledger: the
 * rate ingest is measured against.
 */
export async function run(): Promise<void> {
  const corpus = process.env.BENCH_SCIFACT_DIR ? loadScifact(process.env.BENCH_SCIFACT_DIR) : loadScifact();
  const limit = Number(process.env.BENCH_EMBED_DOCS ?? corpus.documents.length);
  const documents = corpus.documents.slice(0, limit);
  const config = loadConfig({
    env: { CTX_LOG__LEVEL: 'silent', ...process.env },
    overrides: { storage: { dataDir: scratchDir('ctx-bench-embed-') } },
  });
  const ledger = await openLedger(config, { logger: pino({ level: 'silent' }) });
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);
  try {
    console.log(`load average before ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const seconds = await ingestCorpus(ledger, { ...corpus, documents });
    const { embeddings } = config;
    const passages = await embeddedPassages(ledger);
    console.log(
      `SciFact, ${documents.length} documents (${passages.length} chunks), ${embeddings.model} (weights ${embeddings.weights}, threads ${embeddings.threads ?? 'default'}, batch ${embeddings.batchSize}): ` +
        `${seconds.toFixed(1)} s = ${(documents.length / seconds).toFixed(1)} documents/s, ${(passages.length / seconds).toFixed(1)} chunks/s ingested and embedded; ` +
        `peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB; load average after ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    );
    const embedder = await localEmbedderFromConfig(config);
    try {
      await embedder.embed([passages[0]!], 'document'); // loads the model
      const started = performance.now();
      for (let i = 0; i < passages.length; i += embeddings.batchSize)
        await embedder.embed(passages.slice(i, i + embeddings.batchSize), 'document');
      const alone = passages.length / ((performance.now() - started) / 1000);
      const ingested = passages.length / seconds;
      console.log(
        `the model alone, the same ${passages.length} passages: ${alone.toFixed(1)} chunks/s; ` +
          `ingest reached ${((100 * ingested) / alone).toFixed(0)}% of it; load average after ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
      );
    } finally {
      await embedder.close();
    }
  } finally {
    clearInterval(sampler);
    await ledger.close();
  }
}

/** Every chunk the semantic index embedded, as it embedded it: under its document's title. */
const embeddedPassages = async (ledger: Ledger): Promise<string[]> => {
  const docs = (await ledger.db.query<{ doc: DocumentView }>('SELECT doc FROM rm_documents ORDER BY id')).map((r) => r.doc);
  const texts = await ledger.content.get(docs.flatMap((d) => d.chunks.map((c) => c.textHash)));
  return docs.flatMap((d) => d.chunks.map((c) => semanticPassage(d.title ?? null, texts.get(c.textHash))));
};
