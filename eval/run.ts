import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { openLedger, type Ledger } from '../src/main.js';
import { BEIR_FILES, SCIFACT_DIR, evaluateMode, ingestCorpus, loadBeir, subset, type ModeFigures } from './scifact.js';

/** The vector spaces the corpus is embedded in: the model, qualified by its weights unless fp32 (see localEmbedder). */
const vectorSpaces = async (ledger: Ledger): Promise<string[]> =>
  (
    await ledger.db.query<{ model: string }>(
      `SELECT DISTINCT model FROM embedding_cache WHERE model NOT LIKE '%#query' ORDER BY model`,
    )
  ).map((row) => row.model);

const USAGE =
  'Usage: npm run eval -- beir DIR | scifact [--queries N --distractors M] [--data-dir DIR] [--fusion NAME]';

const FUSIONS = ['adaptive', 'rrf', 'weighted'] as const;

/**
 * `npm run eval -- beir DIR` (or `scifact` for BEIR SciFact in the shared data folder): ingests a
 * BEIR-layout corpus into an embedded ledger and prints, per mode (keyword, semantic, hybrid once
 * per fusion), nDCG@10 over the test queries, recall@100, search latency p50/p95 (with the query
 * embedding in the first hybrid mode, which embeds each query first), then ingest time and
 * documents/s. The embedding model comes from `embeddings.model_dir` (CTX_EMBEDDINGS__MODEL_DIR);
 * without one, semantic and hybrid are skipped.
 */
const main = async () => {
  const [name, ...args] = process.argv.slice(2);
  const dir = name === 'beir' ? args.shift() : name === 'scifact' ? SCIFACT_DIR : undefined;
  if (!dir) {
    console.error(USAGE);
    return 2;
  }
  const rest = args;
  const option = (flag: string) => {
    const at = rest.indexOf(flag);
    return at >= 0 ? Number(rest[at + 1]) : undefined;
  };
  // Hybrid runs once per fusion unless `--fusion` names one.
  const fusions: readonly string[] = rest.includes('--fusion') ? [rest[rest.indexOf('--fusion') + 1]!] : FUSIONS;
  const missing = BEIR_FILES.filter((file) => !existsSync(path.join(dir, file)));
  if (missing.length > 0) {
    console.error(
      `${path.resolve(dir)} holds no dataset in the BEIR layout (missing ${missing.join(', ')}). ` +
        'SciFact and the other BEIR sets are published in that layout: unpack one and run `npm run eval -- beir DIR`.',
    );
    return 2;
  }
  const full = loadBeir(path.resolve(dir));
  const source = path.basename(path.resolve(dir));
  const queries = option('--queries');
  const corpus = queries ? subset(full, queries, option('--distractors') ?? 500) : full;
  // `--data-dir` reuses an ingested corpus: unchanged documents append nothing the second time, and
  // embeddings already made are taken from the cache.
  const dataDir = rest.includes('--data-dir')
    ? rest[rest.indexOf('--data-dir') + 1]!
    : mkdtempSync(path.join(tmpdir(), `ctx-${source}-`));
  const ledger = await openLedger(loadConfig({ overrides: { storage: { dataDir } } }), {
    logger: pino({ level: 'warn' }),
  });
  try {
    console.log(`${source}: ${corpus.documents.length} documents, ${corpus.qrels.size} test queries`);
    const seconds = await ingestCorpus(
      ledger,
      corpus,
      (done) => process.stderr.write(`\ringested ${done}`),
      source,
    );
    process.stderr.write('\n');
    const semantic =
      ledger.operations().some((o) => o.name === 'search') && process.env.CTX_EMBEDDINGS__MODEL_DIR;
    if (semantic) console.log(`embeddings: ${(await vectorSpaces(ledger)).join(', ')}`);
    // Query vectors are cached in memory: the first mode that embeds a query pays for it, so hybrid
    // search with the first fusion asked for (the default, adaptive, unless --fusion) goes first.
    const runs: { mode: ModeFigures['mode']; fusion: string }[] = [
      { mode: 'keyword', fusion: 'rrf' },
      ...(semantic
        ? [
            ...fusions.slice(0, 1).map((fusion) => ({ mode: 'hybrid', fusion }) as const),
            { mode: 'semantic', fusion: 'rrf' } as const,
            ...fusions.slice(1).map((fusion) => ({ mode: 'hybrid', fusion }) as const),
          ]
        : []),
    ];
    console.log('mode                nDCG@10  R@100   p50 ms  p95 ms');
    for (const { mode, fusion } of runs) {
      const f = await evaluateMode(ledger, corpus, mode, fusion, { withRecall: true });
      const label = mode === 'hybrid' ? `hybrid (${fusion})` : mode;
      console.log(
        `${label.padEnd(19)} ${f.ndcg10.toFixed(4)}  ${f.recall100.toFixed(4)}  ${f.p50Ms.toFixed(1).padStart(6)}  ${f.p95Ms.toFixed(1).padStart(6)}`,
      );
    }
    if (semantic) console.log(`(query embedding timed in hybrid (${fusions[0]}) only; the modes after it reuse the vectors)`);
    else console.log('semantic, hybrid: skipped (no embedding model: set CTX_EMBEDDINGS__MODEL_DIR)');
    // Measured on this run: with `--data-dir` over an ingested corpus, only what changed is indexed.
    console.log(
      `ingest + indexing: ${seconds.toFixed(1)} s (${(corpus.documents.length / seconds).toFixed(1)} documents/s)`,
    );
  } finally {
    await ledger.close();
  }
  return 0;
};

process.exitCode = await main();
