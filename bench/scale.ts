import path from 'node:path';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../src/config.js';
import { openLedger, type Ledger } from '../src/main.js';
import { callOperation, type OperationContext } from '../src/operations.js';
import { DEFAULT_PROJECT } from '../src/domain/workspace.js';
import { createTestDatabase } from '../test/support/postgres.js';
import { loadBeir, SCIFACT_DIR } from '../eval/scifact.js';
import type { Database } from '../infra/postgres/database.js';
import { embedderFromConfig } from '../src/modules/embedderFromConfig.js';
import { cachedDocumentVectors } from './embeddingCache.js';
import {
  cacheIndexVectors,
  dirBytes,
  fillFromKeywordIndex,
  load,
  measureSemantic,
  measureLedgerIndex,
  measureSyntheticIndex,
  openSemanticIndex,
  percentile,
  printSemanticTables,
  QUERIES,
  type SemanticFigures,
} from './scale/semantic.js';
import { scratchDir } from './scratchDir.js';

/**
 * Ingest at scale, embeddings off: N synthetic documents of about 1 KB (CTX_BENCH_DOCS, default
 * 20,000; 100000 or 1000000 for the larger runs) in batches of CTX_BENCH_BATCH (default 500),
 * through the bulk operation, CTX_BENCH_IN_FLIGHT of them at a time (default 1, as `ctx ingest
 * --jsonl` sends them). Prints documents/s per tenth of the load, keyword search p50/p95, disk by
 * table and the write-ahead log, the BM25 index's segments by level (how many merges it made), and
 * RSS; on the embedded database, and on a PostgreSQL server too when CTX_TEST_PG_URL names one.
 *
 * Then the semantic index at that size, without a model: one random unit vector per chunk (see
 * scale/semantic.ts), its HNSW build, search latency and recall@10 against the exact scan; hybrid
 * search through the search operation with the local model embedding the queries (timed apart);
 * and rebuilds of the keyword index, the documents read model and (with the model) the semantic
 * index, with searches served throughout; the semantic rebuild finds every vector in the embedding
 * cache, as a rebuild of chunks the model has embedded once does, and the bench says how many it
 * embedded.
 * CTX_BENCH_VECTORS (comma-separated, default 1000,10000; 0 for none) adds runs of the semantic
 * index alone, each in a fresh embedded database, at those sizes; CTX_BENCH_QUERIES (default 100)
 * sets the number of recall queries. CTX_BENCH_VECTORS_LEDGER names the data directory of a ledger
 * whose semantic index holds real embeddings (an evaluation's, say): a copy of it is measured alike,
 * with the queries of the BEIR folder CTX_BENCH_CORPUS (default SciFact) embedded by the model.
 * CTX_BENCH_DOCS=0 runs only the semantic index runs; CTX_BENCH_INGEST_ONLY=1 stops after the ingest,
 * keyword search and disk figures (no semantic index, hybrid search or rebuilds); CTX_BENCH_SEMANTIC=0
 * leaves out the semantic index and hybrid search at the corpus's size, for the rebuilds alone.
 * CTX_BENCH_DATA_DIR keeps the embedded database there (default: a temporary directory, removed at
 * the end); one that already holds CTX_BENCH_DOCS documents, as an earlier run left it, is measured
 * without ingesting again, so that a long ingest is paid once for several measurements.
 * CTX_BENCH_EMBEDDED=0 leaves out the embedded database, for the server's figures alone.
 */
const DOCS = Number(process.env.CTX_BENCH_DOCS ?? 20_000);
const BATCH = Number(process.env.CTX_BENCH_BATCH ?? 500);
const IN_FLIGHT = Math.max(1, Number(process.env.CTX_BENCH_IN_FLIGHT ?? 1));
const INGEST_ONLY = process.env.CTX_BENCH_INGEST_ONLY === '1';
const SEMANTIC = process.env.CTX_BENCH_SEMANTIC !== '0';
const EMBEDDED = process.env.CTX_BENCH_EMBEDDED !== '0';
const VECTOR_SIZES = (INGEST_ONLY ? '0' : (process.env.CTX_BENCH_VECTORS ?? '1000,10000'))
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
/** A ledger whose semantic index is measured too, with the queries of the BEIR folder CTX_BENCH_CORPUS. */
const VECTORS_LEDGER = process.env.CTX_BENCH_VECTORS_LEDGER;
const CORPUS = process.env.CTX_BENCH_CORPUS ?? SCIFACT_DIR;
const SEARCHES = 200;

/**
 * A vocabulary large enough that searches find a few hundred documents, not all of them. Its words
 * mix letters and digits (`w63z`), which the keyword index also splits into their parts, as it
 * does identifiers in code: some three times the terms of prose. CTX_BENCH_PROSE=1 draws words of
 * letters only, as prose has.
 */
const PROSE = process.env.CTX_BENCH_PROSE === '1';
const WORDS = Array.from({ length: 5000 }, (_, i) => {
  const word = `w${(i * 7919).toString(36)}`;
  return PROSE ? word.replace(/\d/g, (d) => 'abcdefghij'[Number(d)]!) : word;
});
const word = (n: number) => WORDS[n % WORDS.length]!;

/** A deterministic document of about 1 KB: 140 words drawn from the vocabulary. */
const documentOf = (i: number) => {
  const words: string[] = [];
  let seed = Math.imul(i + 1, 2654435761) >>> 0;
  for (let k = 0; k < 140; k++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    words.push(word(seed >>> 8));
  }
  return { source_id: `doc-${i}.txt`, title: `Document ${i}`, body: words.join(' ') };
};

const context = (): OperationContext => ({
  actor: { subject: 'bench', tenant: null, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: DEFAULT_PROJECT,
});

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

let peakRss = 0;

const walPosition = async (ledger: Ledger) =>
  (await ledger.db.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn'))[0]!.lsn;

const ingest = async (ledger: Ledger) => {
  const operation = ledger.operation('documents.ingest_batch');
  const tenth = Math.max(1, Math.ceil(DOCS / 10));
  let mark = performance.now();
  let markDone = 0;
  const started = mark;
  const cpuAtStart = process.cpuUsage();
  const walAtStart = await walPosition(ledger);
  /** Batches sent and not yet answered, oldest first; each resolves to its number of documents. */
  const inFlight: Promise<number>[] = [];
  let sent = 0;
  for (let done = 0; done < DOCS; ) {
    while (inFlight.length < IN_FLIGHT && sent < DOCS) {
      const first = sent;
      const documents = Array.from({ length: Math.min(BATCH, DOCS - first) }, (_, k) => documentOf(first + k));
      sent += documents.length;
      inFlight.push(operation.run({ source: 'bench', documents }, context()).then(() => documents.length));
    }
    done += await inFlight.shift()!;
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    if (done - markDone >= tenth || done === DOCS) {
      const now = performance.now();
      console.log(
        `  ${String(markDone).padStart(8)}–${String(done).padEnd(8)} ${((done - markDone) / ((now - mark) / 1000)).toFixed(0).padStart(6)} documents/s`,
      );
      mark = now;
      markDone = done;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  // CPU time of every thread (the embedded database's too): steadier than wall time on a busy machine.
  const { user, system } = process.cpuUsage(cpuAtStart);
  console.log(
    `  ingested ${DOCS} documents in ${seconds.toFixed(1)} s: ${(DOCS / seconds).toFixed(0)} documents/s, ` +
      `${((user + system) / DOCS).toFixed(0)} µs of CPU per document; load average ${load()}`,
  );
  const indexing = performance.now();
  await ledger.catchUp();
  const indexed = (performance.now() - indexing) / 1000;
  console.log(
    `  projections caught up ${indexed.toFixed(1)} s after the last batch: ${(DOCS / (seconds + indexed)).toFixed(0)} documents/s ingested and indexed`,
  );
  const [wal] = await ledger.db.query<{ bytes: string }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::text AS bytes`,
    [walAtStart],
  );
  console.log(`  write-ahead log written: ${mib(Number(wal!.bytes))}, ${(Number(wal!.bytes) / DOCS).toFixed(0)} bytes per document`);
  // A rerun (a load resumed after an interruption) sends what is stored: it must be cheap.
  const rerun = Math.min(DOCS, 10_000);
  const rerunStarted = performance.now();
  for (let done = 0; done < rerun; done += BATCH) {
    const documents = Array.from({ length: Math.min(BATCH, rerun - done) }, (_, k) => documentOf(done + k));
    await operation.run({ source: 'bench', documents }, context());
  }
  console.log(`  rerun of ${rerun} unchanged documents: ${(rerun / ((performance.now() - rerunStarted) / 1000)).toFixed(0)} documents/s`);
};

/** The bench's documents a ledger holds already: none in a new one. */
const storedDocuments = async (ledger: Ledger) => {
  const { sources } = (await callOperation(ledger.operation('sources'), {}, context())) as {
    sources: { name: string; doc_count: number }[];
  };
  return sources.find((s) => s.name === 'bench')?.doc_count ?? 0;
};

const search = async (ledger: Ledger) => {
  const operation = ledger.operation('search');
  const took: number[] = [];
  for (let i = 0; i < SEARCHES; i++) {
    const started = performance.now();
    await operation.run({ query: `${word(i * 31)} ${word(i * 17 + 3)}`, mode: 'keyword', limit: 10 }, context());
    took.push(performance.now() - started);
  }
  console.log(`  keyword search (${SEARCHES} queries, top 10): p50 ${percentile(took, 50).toFixed(1)} ms, p95 ${percentile(took, 95).toFixed(1)} ms`);
};

const disk = async (ledger: Ledger, dataDir: string | null) => {
  const tables = await ledger.db.query<{ name: string; bytes: string }>(
    `SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
      ORDER BY pg_total_relation_size(c.oid) DESC LIMIT 8`,
  );
  for (const { name, bytes } of tables) {
    console.log(`  ${name.padEnd(30)} ${mib(Number(bytes)).padStart(12)} ${(Number(bytes) / DOCS).toFixed(0).padStart(7)} bytes/document`);
  }
  const levels = await ledger.db
    .query<{ name: string; levels: number[] }>(
      `SELECT c.relname AS name, bm25_level_counts(c.oid) AS levels
         FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'bm25'`,
    )
    .catch(() => []);
  for (const { name, levels: counts } of levels) console.log(`  ${name}: segments by level ${counts.join(', ')}`);
  const [database] = await ledger.db.query<{ bytes: string }>('SELECT pg_database_size(current_database())::text AS bytes');
  console.log(`  database                       ${mib(Number(database!.bytes)).padStart(12)} ${(Number(database!.bytes) / DOCS).toFixed(0).padStart(7)} bytes/document`);
  if (dataDir) {
    const wal = dirBytes(path.join(dataDir, 'pgdata', 'pg_wal'));
    const total = dirBytes(dataDir);
    console.log(`  pg_wal                         ${mib(wal).padStart(12)} ${(wal / DOCS).toFixed(0).padStart(7)} bytes/document`);
    console.log(`  data directory                 ${mib(total).padStart(12)} ${(total / DOCS).toFixed(0).padStart(7)} bytes/document`);
  }
};

type Search = { query: string; mode: 'keyword' | 'semantic' | 'hybrid'; limit: number };
type Found = { mode?: string; results: unknown[] };

const searchQuery = (i: number) => `${word(i * 31)} ${word(i * 17 + 3)}`;

const searchOnce = async (ledger: Ledger, input: Search) =>
  (await callOperation(ledger.operation('search'), input, context())) as Found;

/** p50, p95 and the longest: a search that waited behind one long statement shows only there. */
const figures = (took: readonly number[]) =>
  `p50 ${percentile(took, 50).toFixed(1)} ms, p95 ${percentile(took, 95).toFixed(1)} ms, max ${Math.max(...took).toFixed(1)} ms`;

/** The semantic index at the corpus's size: one random unit vector per chunk, built and searched. */
const semantic = async (ledger: Ledger, dataDir: string | null): Promise<SemanticFigures> => {
  const started = performance.now();
  console.log(`  semantic index: one random unit vector per chunk; load average ${load()}`);
  const index = await openSemanticIndex(ledger.db, ledger.content);
  const fill = await fillFromKeywordIndex(ledger.db);
  console.log(`  loaded in ${fill.loadSeconds.toFixed(1)} s, HNSW index built in ${fill.buildSeconds.toFixed(1)} s`);
  const figures = await measureSemantic(ledger.db, index, dataDir, fill, started);
  // The index holds every chunk there is: its projection starts where the keyword index stands.
  await ledger.db.query(
    `UPDATE projection_checkpoints SET position = (SELECT position FROM projection_checkpoints WHERE name = 'keyword' AND slot = 'live')
      WHERE name = 'semantic' AND slot = 'live'`,
  );
  return figures;
};

/** Hybrid search through the search operation: first with each query embedded by the model, then from the query cache. */
const hybrid = async (ledger: Ledger): Promise<boolean> => {
  const probe = await searchOnce(ledger, { query: searchQuery(0), mode: 'hybrid', limit: 10 }).catch((error: Error) => error);
  if (probe instanceof Error || probe.mode !== 'hybrid') {
    console.log(`  hybrid search: skipped (${probe instanceof Error ? probe.message : 'no embedding model is loaded'})`);
    return false;
  }
  const pass = async (mode: Search['mode']) => {
    const took: number[] = [];
    for (let i = 1; i <= SEARCHES; i++) {
      const started = performance.now();
      await searchOnce(ledger, { query: searchQuery(i), mode, limit: 10 });
      took.push(performance.now() - started);
    }
    return took;
  };
  console.log(`  hybrid search (${SEARCHES} queries, top 10), query embedded by the model: ${figures(await pass('hybrid'))}`);
  console.log(`  hybrid search, query vector from the cache: ${figures(await pass('hybrid'))}`);
  console.log(`  semantic search, query vector from the cache: ${figures(await pass('semantic'))}`);
  return true;
};

/**
 * Caches the semantic index's vectors as the local model's, so that its rebuild embeds none; returns
 * the cache's size. The model is loaded for its name: the cache knows it with its weights' type.
 */
const cacheForRebuild = async (db: Database) => {
  const embedder = await embedderFromConfig(loadConfig({ env: { ...process.env, CTX_EMBEDDINGS__PROVIDER: 'local' } }), db);
  const model = embedder.model;
  await embedder.close();
  const started = performance.now();
  const cached = await cacheIndexVectors(db, model);
  console.log(`  ${cached} vectors put in the embedding cache as ${model}'s in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return cachedDocumentVectors(db);
};

/** Rebuilds the named projections through the operation, one after the other, searching every 100 ms meanwhile. */
const rebuildUnderSearch = async (ledger: Ledger, names: readonly string[], modes: readonly Search['mode'][]) => {
  console.log(`  rebuild with searches served throughout (${modes.join(' and ')}, one every 100 ms); load average ${load()}`);
  const took = new Map(modes.map((mode) => [mode, [] as number[]]));
  const failures: string[] = [];
  let empty = 0;
  let rebuilding = true;
  const searching = (async () => {
    for (let i = 0; rebuilding; i++) {
      const mode = modes[i % modes.length]!;
      const started = performance.now();
      try {
        if ((await searchOnce(ledger, { query: searchQuery(i), mode, limit: 10 })).results.length === 0) empty++;
        took.get(mode)!.push(performance.now() - started);
      } catch (error) {
        failures.push((error as Error).message);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 100 - (performance.now() - started))));
    }
  })();
  try {
    for (const name of names) {
      const started = performance.now();
      const progress = (await callOperation(ledger.operation('projections.rebuild'), { name }, context())) as {
        processedEvents: number;
      };
      const seconds = (performance.now() - started) / 1000;
      console.log(`  rebuilt ${name} in ${seconds.toFixed(1)} s (${progress.processedEvents} events)`);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }
  } finally {
    rebuilding = false;
    await searching;
  }
  for (const [mode, values] of took) console.log(`  ${mode} searches during the rebuilds: ${values.length}, ${figures(values)}`);
  console.log(`  searches failed: ${failures.length}${failures.length ? ` (${[...new Set(failures)].join('; ')})` : ''}; answered empty: ${empty}`);
};

/** The corpus's queries, embedded by the configured model as search embeds them. */
const embedQueries = async (db: Database) => {
  const embedder = await embedderFromConfig(loadConfig({ env: process.env }), db);
  try {
    return await embedder.embed([...loadBeir(CORPUS).queries.values()].slice(0, QUERIES), 'query');
  } finally {
    await embedder.close();
  }
};

const openBench = (storage: { dataDir: string } | { postgresUrl: string }, provider: 'none' | 'local') =>
  openLedger(loadConfig({ env: { ...process.env, CTX_EMBEDDINGS__PROVIDER: provider }, overrides: { storage } }), {
    logger: pino({ level: 'warn' }),
  });

const measure = async (
  label: string,
  storage: { dataDir: string } | { postgresUrl: string },
): Promise<SemanticFigures | null> => {
  const started = performance.now();
  console.log(
    `${label}: ${DOCS} documents of about 1 KB${PROSE ? ' (prose words)' : ''}, batches of ${BATCH}` +
      `${IN_FLIGHT > 1 ? `, ${IN_FLIGHT} at a time` : ''}, embeddings off; load average ${load()}`,
  );
  const dataDir = 'dataDir' in storage ? storage.dataDir : null;
  let ledger = await openBench(storage, 'none');
  let figures: SemanticFigures | null = null;
  try {
    await ledger.projections.start();
    const stored = await storedDocuments(ledger);
    if (stored >= DOCS) console.log(`  ${stored} documents already stored in ${dataDir}: not ingested again`);
    else await ingest(ledger);
    await search(ledger);
    await disk(ledger, dataDir);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    console.log(`  peak RSS ${mib(peakRss)}; load average ${load()}`);
    if (INGEST_ONLY) return null;
    if (SEMANTIC) figures = await semantic(ledger, dataDir);
  } finally {
    await ledger.close();
  }
  // Opened again with the local model, whose semantic projection finds its index complete (without
  // the semantic index, without the model: its projection would embed every chunk).
  ledger = await openBench(storage, SEMANTIC ? 'local' : 'none');
  try {
    await ledger.catchUp();
    const withModel = SEMANTIC && (await hybrid(ledger));
    const cachedBefore = withModel ? await cacheForRebuild(ledger.db) : 0;
    await rebuildUnderSearch(
      ledger,
      withModel ? ['keyword', 'documents', 'semantic'] : ['keyword', 'documents'],
      withModel ? ['keyword', 'hybrid'] : ['keyword'],
    );
    if (withModel) console.log(`  chunks the model embedded during the rebuilds: ${(await cachedDocumentVectors(ledger.db)) - cachedBefore}`);
    console.log(`  disk after ${SEMANTIC ? 'the semantic index and ' : ''}the rebuilds:`);
    await disk(ledger, dataDir);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    console.log(`  peak RSS ${mib(peakRss)}; load average ${load()}; ${((performance.now() - started) / 1000).toFixed(0)} s in all`);
  } finally {
    await ledger.close();
  }
  return figures;
};

export async function run(): Promise<void> {
  const semanticRuns: SemanticFigures[] = [];
  for (const n of VECTOR_SIZES.filter((n) => n < DOCS)) semanticRuns.push(await measureSyntheticIndex(n));
  if (DOCS > 0 && EMBEDDED) {
    const dataDir = process.env.CTX_BENCH_DATA_DIR ?? scratchDir('ctx-bench-scale-');
    const figures = await measure('embedded (PGlite)', { dataDir });
    if (figures) semanticRuns.push(figures);
  }
  for (const n of VECTOR_SIZES.filter((n) => n > DOCS)) semanticRuns.push(await measureSyntheticIndex(n));
  if (VECTORS_LEDGER) semanticRuns.push(await measureLedgerIndex(VECTORS_LEDGER, `${path.basename(CORPUS)} (model)`, embedQueries));
  if (semanticRuns.length > 0) printSemanticTables(semanticRuns);
  const serverUrl = process.env.CTX_TEST_PG_URL;
  if (!serverUrl) {
    console.log('PostgreSQL server: skipped (set CTX_TEST_PG_URL)');
    return;
  }
  const database = await createTestDatabase(serverUrl, 'ctx_bench_scale');
  try {
    const figures = await measure('PostgreSQL server', { postgresUrl: database.url });
    if (figures) printSemanticTables([figures]);
  } catch (error) {
    // A server without the keyword index's extension is told, not fatal: the embedded figures stand.
    if (!(error instanceof ConfigError)) throw error;
    console.log(`PostgreSQL server: skipped (${error.message.replace(/\s+/g, ' ')})`);
  } finally {
    await database.drop();
  }
}
