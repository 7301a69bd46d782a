import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { openLedger, type Ledger } from '../src/main.js';
import { evaluateMode, ingestCorpus, loadScifact, subset, type ModeFigures } from './scifact.js';

/** The vector spaces the corpus is embedded in: the model, qualified by its weights unless fp32 (see localEmbedder). */
const vectorSpaces = async (ledger: Ledger): Promise<string[]> =>
  (
    await ledger.db.query<{ model: string }>(
      `SELECT DISTINCT model FROM embedding_cache WHERE model NOT LIKE '%#query' ORDER BY model`,
    )
  ).map((row) => row.model);

/**
 * `npm run eval -- scifact [--queries N --distractors M]`: ingests BEIR SciFact into a fresh
 * embedded ledger and prints nDCG@10 over the test queries for keyword, semantic and hybrid search
 * (once per fusion: reciprocal-rank and weighted), with search latency and ingest time. The
 * embedding model comes from `embeddings.model_dir` (CTX_EMBEDDINGS__MODEL_DIR); without one,
 * semantic and hybrid are skipped.
 */
const main = async () => {
  const [name, ...rest] = process.argv.slice(2);
  if (name !== 'scifact') {
    console.error(
      'Usage: npm run eval -- scifact [--queries N --distractors M] [--data-dir DIR] [--fusion rrf|weighted]',
    );
    return 2;
  }
  const option = (flag: string) => {
    const at = rest.indexOf(flag);
    return at >= 0 ? Number(rest[at + 1]) : undefined;
  };
  // Hybrid runs once per fusion unless `--fusion` names one.
  const fusions = rest.includes('--fusion')
    ? [rest[rest.indexOf('--fusion') + 1] as 'rrf' | 'weighted']
    : (['rrf', 'weighted'] as const);
  const full = loadScifact();
  const queries = option('--queries');
  const corpus = queries ? subset(full, queries, option('--distractors') ?? 500) : full;
  // `--data-dir` reuses an ingested corpus: unchanged documents append nothing the second time.
  const dataDir = rest.includes('--data-dir')
    ? rest[rest.indexOf('--data-dir') + 1]!
    : mkdtempSync(path.join(tmpdir(), 'ctx-scifact-'));
  const ledger = await openLedger(loadConfig({ overrides: { storage: { dataDir } } }), {
    logger: pino({ level: 'warn' }),
  });
  try {
    console.log(`SciFact: ${corpus.documents.length} documents, ${corpus.qrels.size} test queries`);
    const seconds = await ingestCorpus(ledger, corpus, (done) => process.stderr.write(`\ringested ${done}`));
    process.stderr.write('\n');
    console.log(
      `ingest + indexing: ${seconds.toFixed(1)} s (${(corpus.documents.length / seconds).toFixed(1)} documents/s)`,
    );
    const semantic =
      ledger.operations().some((o) => o.name === 'search') && process.env.CTX_EMBEDDINGS__MODEL_DIR;
    if (semantic) console.log(`embeddings: ${(await vectorSpaces(ledger)).join(', ')}`);
    const runs: { mode: ModeFigures['mode']; fusion: 'rrf' | 'weighted' }[] = [
      { mode: 'keyword', fusion: 'rrf' },
      ...(semantic
        ? [
            { mode: 'semantic', fusion: 'rrf' } as const,
            ...fusions.map((fusion) => ({ mode: 'hybrid', fusion }) as const),
          ]
        : []),
    ];
    console.log('mode                nDCG@10  p50 ms  p95 ms');
    for (const { mode, fusion } of runs) {
      const f = await evaluateMode(ledger, corpus, mode, fusion);
      const label = mode === 'hybrid' ? `hybrid (${fusion})` : mode;
      console.log(
        `${label.padEnd(19)} ${f.ndcg10.toFixed(4)}  ${f.p50Ms.toFixed(1).padStart(6)}  ${f.p95Ms.toFixed(1).padStart(6)}`,
      );
    }
    if (!semantic)
      console.log('semantic, hybrid: skipped (no embedding model: set CTX_EMBEDDINGS__MODEL_DIR)');
  } finally {
    await ledger.close();
  }
  return 0;
};

process.exitCode = await main();
