import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import type { SearchOutput } from '../queries/search/searchDocuments.js';
import { loadConfig, type Config } from '../src/config.js';
import { openLedger, type Ledger } from '../src/main.js';
import { DEFAULT_SETTING, leaveOneOut, replay, SETTINGS_GRID, type QueryLists, type Ranked } from './loo.js';
import { BEIR_FILES, context, evaluateMode, ingestCorpus, loadBeir, sampleCorpus, type Corpus } from './scifact.js';
import { formatComparison, formatGrid, formatLoo, formatRuns, type CorpusRun, type RunFile } from './table.js';

/** Built corpora, ingested samples and saved runs: CTX_EVAL_CACHE, else ~/.cache/context-ledger/eval. */
const CACHE = process.env.CTX_EVAL_CACHE ?? path.join(homedir(), '.cache', 'context-ledger', 'eval');

const USAGE = `Usage: npm run eval -- [NAME|DIR ...] [--all] [--data-dir DIRS] [--queries N] [--docs N] [--seed S]
                        [--fusion adaptive|rrf|weighted] [--out FILE] [--loo]
       npm run eval -- --compare BEFORE.json AFTER.json
       npm run eval -- --loo RUN.json`;

/**
 * Published BM25 nDCG@10 (BEIR paper, Thakur et al. 2021) for the BEIR sets, on the whole corpus;
 * a `reference.json` ({"bm25": 0.665}) beside a corpus gives or overrides its figure.
 */
const PUBLISHED_BM25: Record<string, number> = {
  scifact: 0.665,
  nfcorpus: 0.325,
  fiqa: 0.236,
  arguana: 0.315,
  scidocs: 0.158,
  'trec-covid': 0.656,
  quora: 0.789,
  nq: 0.329,
  hotpotqa: 0.603,
};

/** Where corpora are looked up by name: `--data-dir`, else CTX_EVAL_DATA (both may list several, `:`-separated), else the shared data beside the checkout and the eval cache. */
const dataDirs = (given: string | undefined): string[] =>
  (given ?? process.env.CTX_EVAL_DATA ?? [path.resolve(import.meta.dirname, '../../shared/data'), CACHE].join(path.delimiter))
    .split(path.delimiter)
    .filter(Boolean);

const isBeir = (dir: string) => BEIR_FILES.every((file) => existsSync(path.join(dir, file)));

const resolveCorpus = (name: string, dirs: readonly string[]): string => {
  if (name.includes('/') || name.startsWith('.')) {
    const dir = path.resolve(name);
    const missing = BEIR_FILES.filter((file) => !existsSync(path.join(dir, file)));
    if (missing.length > 0)
      throw new Error(
        `${dir} holds no dataset in the BEIR layout (missing ${missing.join(', ')}). ` +
          'SciFact and the other BEIR sets are published in that layout: unpack one and name its folder.',
      );
    return dir;
  }
  const found = dirs.map((d) => path.join(d, name)).find(isBeir);
  if (!found) throw new Error(`No corpus '${name}' in the BEIR layout under ${dirs.join(', ')}`);
  return found;
};

const allCorpora = (dirs: readonly string[]): string[] => {
  const byName = new Map<string, string>();
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir).sort()) {
      const folder = path.join(dir, entry);
      if (!byName.has(entry) && isBeir(folder)) byName.set(entry, folder);
    }
  }
  return [...byName.values()];
};

/** The documents one mode ranks first for a query, with their scores (keyword or semantic alone). */
const ranking = async (ledger: Ledger, query: string, mode: 'keyword' | 'semantic', limit: number): Promise<Ranked[]> =>
  ((await ledger.operation('search').run({ query, mode, limit }, context())) as SearchOutput).results.map((r) => ({
    id: r.source_id,
    score: r.score,
  }));

const vectorSpace = async (ledger: Ledger): Promise<string | null> =>
  (
    await ledger.db.query<{ model: string }>(
      `SELECT DISTINCT model FROM embedding_cache WHERE model NOT LIKE '%#query' ORDER BY model`,
    )
  )
    .map((row) => row.model)
    .join(', ') || null;

const publishedBm25 = (dir: string): number | undefined => {
  const file = path.join(dir, 'reference.json');
  if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { bm25?: number }).bm25;
  return PUBLISHED_BM25[path.basename(dir)];
};

interface Options {
  queries: number;
  documents: number;
  seed: number;
  fusion: string;
}

const hasModel = (config: Config) =>
  config.embeddings.provider === 'http' ||
  (config.embeddings.provider === 'local' && existsSync(path.join(config.embeddings.modelDir, config.embeddings.model)));

const count = (n: number) => (Number.isFinite(n) ? String(n) : 'all');

/** Ingests a corpus sample into its cached ledger and measures every mode on it. */
const runCorpus = async (dir: string, options: Options): Promise<CorpusRun> => {
  const name = path.basename(dir);
  const full = loadBeir(dir);
  const corpus: Corpus = sampleCorpus(full, options);
  // q8 weights unless the environment names others: the int8 export embeds several times faster.
  const env = { CTX_EMBEDDINGS__WEIGHTS: 'q8', ...process.env };
  const weights = env.CTX_EMBEDDINGS__WEIGHTS;
  // One ledger per corpus sample and weights: a rerun reuses its documents and embeddings.
  const dataDir = path.join(CACHE, 'ledgers', `${name}-q${count(options.queries)}-d${count(options.documents)}-s${options.seed}-${weights}`);
  const config = loadConfig({ env, overrides: { storage: { dataDir } } });
  const semantic = hasModel(config);
  const ledger = await openLedger(config, { logger: pino({ level: 'warn' }) });
  try {
    console.error(
      `${name}: ${corpus.documents.length} of ${full.documents.length} documents, ${corpus.qrels.size} of ${full.qrels.size} test queries (seed ${options.seed}); ledger ${dataDir}`,
    );
    const seconds = await ingestCorpus(ledger, corpus, (done) => process.stderr.write(`\r${name}: ingested ${done}`), name);
    process.stderr.write(`\n${name}: ingest and indexing ${seconds.toFixed(0)} s\n`);
    const run: CorpusRun = {
      corpus: name,
      sample: {
        queries: corpus.qrels.size,
        ofQueries: full.qrels.size,
        documents: corpus.documents.length,
        ofDocuments: full.documents.length,
        seed: options.seed,
      },
      embeddings: semantic ? await vectorSpace(ledger) : null,
      fusion: options.fusion,
      scores: {},
      publishedBm25: publishedBm25(dir),
    };
    if (semantic) {
      // Loads the model before the timed queries.
      await ledger.operation('search').run({ query: 'warm up', mode: 'hybrid', limit: 10 }, context());
      // First among the modes that embed, so each query's embedding is in its time.
      const hybrid = await evaluateMode(ledger, corpus, 'hybrid', options.fusion, { withRecall: true });
      run.scores.hybrid = hybrid.perQuery;
      run.hybridLatency = { p50: hybrid.p50Ms, p95: hybrid.p95Ms };
      const semanticFigures = await evaluateMode(ledger, corpus, 'semantic', undefined, { withRecall: true });
      run.scores.semantic = semanticFigures.perQuery;
      run.recall100 = { hybrid: hybrid.recall100, semantic: semanticFigures.recall100 };
    }
    const keyword = await evaluateMode(ledger, corpus, 'keyword', undefined, { withRecall: true });
    run.scores.keyword = keyword.perQuery;
    run.recall100 = { ...run.recall100, keyword: keyword.recall100 };
    if (semantic) {
      run.lists = {};
      for (const [id, relevant] of corpus.qrels) {
        const query = corpus.queries.get(id)!;
        run.lists[id] = {
          keyword: await ranking(ledger, query, 'keyword', 50),
          semantic: await ranking(ledger, query, 'semantic', 50),
          relevant: [...relevant],
        } satisfies QueryLists;
      }
    }
    return run;
  } finally {
    await ledger.close();
  }
};

const readRun = (file: string): RunFile => JSON.parse(readFileSync(file, 'utf8')) as RunFile;

/** Replays every fusion setting on the recorded rankings and chooses one by leaving one corpus out. */
const printLoo = (runs: readonly CorpusRun[]) => {
  const withLists = runs.filter((r) => r.lists);
  if (withLists.length < 2) {
    console.log('leave-one-corpus-out: needs two or more corpora run with an embedding model');
    return;
  }
  const scores = Object.fromEntries(
    withLists.map((r) => [r.corpus, Object.fromEntries(SETTINGS_GRID.map((s) => [s.name, replay(r.lists!, s)]))]),
  );
  console.log(`\n${formatGrid(scores)}\n`);
  console.log(formatLoo(leaveOneOut(scores, DEFAULT_SETTING.name), DEFAULT_SETTING.name));
};

const main = async (): Promise<number> => {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const at = args.indexOf(name);
    if (at < 0) return undefined;
    const [value] = args.splice(at, 2).slice(1);
    if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value\n${USAGE}`);
    return value;
  };
  const toggle = (name: string) => {
    const at = args.indexOf(name);
    if (at >= 0) args.splice(at, 1);
    return at >= 0;
  };
  if (args.includes('--compare')) {
    const at = args.indexOf('--compare');
    const [before, after] = args.slice(at + 1, at + 3);
    if (!before || !after) throw new Error(USAGE);
    console.log(formatComparison(readRun(before), readRun(after)));
    return 0;
  }
  const looAt = args.indexOf('--loo');
  if (looAt >= 0 && args[looAt + 1]?.endsWith('.json')) {
    printLoo(readRun(args[looAt + 1]!).corpora);
    return 0;
  }
  const loo = toggle('--loo');
  const all = toggle('--all');
  const dirs = dataDirs(flag('--data-dir'));
  const number = (name: string, fallback: number) => {
    const value = flag(name);
    if (value === undefined) return fallback;
    const n = Number(value === 'all' ? Infinity : value);
    if (!(n > 0)) throw new Error(`${name} takes a positive number or 'all'`);
    return n;
  };
  const options: Options = {
    queries: number('--queries', 200),
    documents: number('--docs', 2500),
    seed: number('--seed', 1),
    fusion: flag('--fusion') ?? 'adaptive',
  };
  const out = flag('--out') ?? path.join(CACHE, 'results', `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  // `beir DIR` and `scifact` read as before: a folder, or a name.
  const names = args.filter((a) => a !== 'beir');
  const corpora = all ? allCorpora(dirs) : names.map((n) => resolveCorpus(n, dirs));
  if (corpora.length === 0 || names.some((n) => n.startsWith('--'))) {
    console.error(USAGE);
    return 2;
  }
  const runs: CorpusRun[] = [];
  for (const dir of corpora) {
    runs.push(await runCorpus(dir, options));
    // Written after each corpus, so an interrupted run keeps what it measured.
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify({ createdAt: new Date().toISOString(), corpora: runs } satisfies RunFile));
  }
  console.log(
    `nDCG@10, hybrid fusion ${options.fusion}; embeddings ${[...new Set(runs.map((r) => r.embeddings ?? 'none'))].join(', ')}`,
  );
  console.log(formatRuns(runs));
  console.log(`per-query scores: ${out} (compare two runs with npm run eval -- --compare BEFORE AFTER)`);
  if (loo) printLoo(runs);
  return 0;
};

try {
  process.exitCode = await main();
} catch (error) {
  console.error((error as Error).message);
  process.exitCode = 2;
}
