import { loadavg } from 'node:os';
import { pino } from 'pino';
import { ingestCorpus, loadScifact } from '../eval/scifact.js';
import type { Position } from '../src/domain/position.js';
import { loadConfig } from '../src/config.js';
import { openLedger, type Ledger } from '../src/main.js';
import { type OperationContext } from '../src/operations.js';
import { DEFAULT_PROJECT } from '../src/domain/workspace.js';
import { cachedDocumentVectors } from './embeddingCache.js';
import { scratchDir } from './scratchDir.js';

/**
 * Ingests BEIR SciFact into a fresh embedded ledger (which warms the embedding cache), then prints
 * the rebuild time and events/s of the keyword index, the semantic index (embeddings from the
 * cache) and every view, and the latency of search as of the middle position: the first query
 * (which builds that position's index) apart, then p50/p95 over 20 queries.
 * CTX_BENCH_DATA_DIR reuses an ingested ledger; CTX_BENCH_DOCS ingests only the first N documents.
 */
const QUERIES = 20;

const context = (): OperationContext => ({
  actor: { subject: 'bench', tenant: null, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: DEFAULT_PROJECT,
});

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** The position of the middle document event: half the corpus ingested. */
const middlePosition = async (ledger: Ledger): Promise<Position> => {
  const ingested = [];
  let from: Position | undefined;
  for (;;) {
    const page = await ledger.store.readAll({
      ...(from ? { from } : {}),
      maxCount: 5_000,
      filter: { eventTypes: ['DocumentIngested', 'DocumentRemoved'] },
    });
    if (page.length === 0) break;
    ingested.push(...page.map((e) => e.position));
    from = page[page.length - 1]!.position;
  }
  return ingested[Math.floor(ingested.length / 2)]!;
};

const rebuild = async (ledger: Ledger, name: string) => {
  const started = performance.now();
  const progress = await ledger.projections.rebuild(name);
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${name.padEnd(22)} ${seconds.toFixed(2).padStart(8)} s ${String(progress.processedEvents).padStart(8)} events ` +
      `${(progress.processedEvents / seconds).toFixed(0).padStart(8)} events/s`,
  );
};

/** As-of search latency: the first query (which builds the position's index) apart, then the rest beside live search. */
const asOfLatency = async (
  ledger: Ledger,
  queries: readonly string[],
  at: Position,
  mode: 'keyword' | 'semantic' | 'hybrid',
) => {
  const search = ledger.operation('search');
  const timed = async (query: string, asOf?: Position) => {
    const started = performance.now();
    await search.run({ query, mode, limit: 10, ...(asOf ? { asOf } : {}) }, context());
    return performance.now() - started;
  };
  const first = await timed(queries[0]!, at);
  const asOf = [];
  const live = [];
  for (const query of queries.slice(1)) {
    asOf.push(await timed(query, at));
    live.push(await timed(query));
  }
  const figures = (values: number[]) =>
    `p50 ${percentile(values, 50).toFixed(1).padStart(6)} ms p95 ${percentile(values, 95).toFixed(1).padStart(6)} ms`;
  console.log(
    `${mode.padEnd(9)} first query ${first.toFixed(0).padStart(7)} ms | then ${figures(asOf)} | live ${figures(live)}` +
      ` (${asOf.length} queries)`,
  );
};

export async function run(): Promise<void> {
  const semantic = Boolean(process.env.CTX_EMBEDDINGS__MODEL_DIR);
  const full = loadScifact();
  const limit = Number(process.env.CTX_BENCH_DOCS ?? full.documents.length);
  const corpus = { ...full, documents: full.documents.slice(0, limit) };
  const dataDir = process.env.CTX_BENCH_DATA_DIR ?? scratchDir('ctx-bench-rebuild-');
  const env = semantic ? process.env : { ...process.env, CTX_EMBEDDINGS__PROVIDER: 'none' };
  const ledger = await openLedger(loadConfig({ env, overrides: { storage: { dataDir } } }), {
    logger: pino({ level: 'warn' }),
  });
  try {
    console.log(`SciFact: ${corpus.documents.length} documents; data in ${dataDir}; load average ${load()}`);
    const seconds = await ingestCorpus(ledger, corpus, (done) => process.stderr.write(`\ringested ${done}`));
    process.stderr.write('\n');
    console.log(`ingest + indexing (warms the embedding cache): ${seconds.toFixed(1)} s`);

    console.log('\nrebuild                    time      events    events/s');
    await rebuild(ledger, 'keyword');
    if (semantic) {
      const before = await cachedDocumentVectors(ledger.db);
      await rebuild(ledger, 'semantic');
      console.log(
        `  (semantic: ${(await cachedDocumentVectors(ledger.db)) - before} chunks embedded; the rest from the cache)`,
      );
    } else console.log('semantic: skipped (set CTX_EMBEDDINGS__MODEL_DIR)');
    const views = (await ledger.projections.status())
      .map((s) => s.name)
      .filter((name) => name !== 'keyword' && name !== 'semantic');
    for (const name of views) await rebuild(ledger, name);

    const middle = await middlePosition(ledger);
    const queries = [...corpus.queries.values()].slice(0, QUERIES + 1);
    console.log(`\nsearch as of the middle position ${middle}; load average ${load()}`);
    console.log(
      "(the first keyword and the first semantic query build that position's indexes; hybrid reuses both)",
    );
    await asOfLatency(ledger, queries, middle, 'keyword');
    if (semantic) {
      const before = await cachedDocumentVectors(ledger.db);
      await asOfLatency(ledger, queries, middle, 'semantic');
      await asOfLatency(ledger, queries, middle, 'hybrid');
      console.log(`  (as-of semantic: ${(await cachedDocumentVectors(ledger.db)) - before} chunks embedded)`);
    }
    console.log(`load average at the end ${load()}`);
  } finally {
    await ledger.close();
  }
}
