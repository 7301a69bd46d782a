import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../src/config.js';
import { openLedger, type Ledger } from '../src/main.js';
import { DEFAULT_PROJECT, type OperationContext } from '../src/operations.js';
import { createTestDatabase } from '../test/support/postgres.js';

/**
 * Ingest at scale, embeddings off: N synthetic documents of about 1 KB (CTX_BENCH_DOCS, default
 * 20,000; 100000 or 1000000 for the larger runs) in batches of CTX_BENCH_BATCH (default 500),
 * through the bulk operation. Prints documents/s per tenth of the load, keyword search p50/p95,
 * disk by table and the write-ahead log, and RSS; on the embedded database, and on a PostgreSQL
 * server too when CTX_TEST_PG_URL names one.
 */
const DOCS = Number(process.env.CTX_BENCH_DOCS ?? 20_000);
const BATCH = Number(process.env.CTX_BENCH_BATCH ?? 500);
const SEARCHES = 200;

/** A vocabulary large enough that searches find a few hundred documents, not all of them. */
const WORDS = Array.from({ length: 5000 }, (_, i) => `w${(i * 7919).toString(36)}`);
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

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

const dirBytes = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const full = path.join(dir, entry.name);
    return sum + (entry.isDirectory() ? dirBytes(full) : entry.isFile() ? statSync(full).size : 0);
  }, 0);

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

let peakRss = 0;

const ingest = async (ledger: Ledger) => {
  const operation = ledger.operation('documents.ingest_batch');
  const tenth = Math.max(1, Math.ceil(DOCS / 10));
  let mark = performance.now();
  let markDone = 0;
  const started = mark;
  for (let done = 0; done < DOCS; ) {
    const documents = Array.from({ length: Math.min(BATCH, DOCS - done) }, (_, k) => documentOf(done + k));
    await operation.run({ source: 'bench', documents }, context());
    done += documents.length;
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
  console.log(`  ingested ${DOCS} documents in ${seconds.toFixed(1)} s: ${(DOCS / seconds).toFixed(0)} documents/s`);
  const indexing = performance.now();
  await ledger.catchUp();
  const indexed = (performance.now() - indexing) / 1000;
  console.log(
    `  projections caught up ${indexed.toFixed(1)} s after the last batch: ${(DOCS / (seconds + indexed)).toFixed(0)} documents/s ingested and indexed`,
  );
  // A rerun (a load resumed after an interruption) sends what is stored: it must be cheap.
  const rerun = Math.min(DOCS, 10_000);
  const rerunStarted = performance.now();
  for (let done = 0; done < rerun; done += BATCH) {
    const documents = Array.from({ length: Math.min(BATCH, rerun - done) }, (_, k) => documentOf(done + k));
    await operation.run({ source: 'bench', documents }, context());
  }
  console.log(`  rerun of ${rerun} unchanged documents: ${(rerun / ((performance.now() - rerunStarted) / 1000)).toFixed(0)} documents/s`);
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
  const [database] = await ledger.db.query<{ bytes: string }>('SELECT pg_database_size(current_database())::text AS bytes');
  console.log(`  database                       ${mib(Number(database!.bytes)).padStart(12)} ${(Number(database!.bytes) / DOCS).toFixed(0).padStart(7)} bytes/document`);
  if (dataDir) {
    const wal = dirBytes(path.join(dataDir, 'pgdata', 'pg_wal'));
    const total = dirBytes(dataDir);
    console.log(`  pg_wal                         ${mib(wal).padStart(12)} ${(wal / DOCS).toFixed(0).padStart(7)} bytes/document`);
    console.log(`  data directory                 ${mib(total).padStart(12)} ${(total / DOCS).toFixed(0).padStart(7)} bytes/document`);
  }
};

const measure = async (label: string, storage: { dataDir: string } | { postgresUrl: string }) => {
  console.log(`${label}: ${DOCS} documents of about 1 KB, batches of ${BATCH}, embeddings off`);
  const env = { ...process.env, CTX_EMBEDDINGS__PROVIDER: 'none' };
  const ledger = await openLedger(loadConfig({ env, overrides: { storage } }), { logger: pino({ level: 'warn' }) });
  try {
    await ledger.projections.start();
    await ingest(ledger);
    await search(ledger);
    await disk(ledger, 'dataDir' in storage ? storage.dataDir : null);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    console.log(`  peak RSS ${mib(peakRss)}`);
  } finally {
    await ledger.close();
  }
};

export async function run(): Promise<void> {
  await measure('embedded (PGlite)', { dataDir: mkdtempSync(path.join(tmpdir(), 'ctx-bench-scale-')) });
  const serverUrl = process.env.CTX_TEST_PG_URL;
  if (!serverUrl) {
    console.log('PostgreSQL server: skipped (set CTX_TEST_PG_URL)');
    return;
  }
  const database = await createTestDatabase(serverUrl, 'ctx_bench_scale');
  try {
    await measure('PostgreSQL server', { postgresUrl: database.url });
  } catch (error) {
    // A server without the keyword index's extension is told, not fatal: the embedded figures stand.
    if (!(error instanceof ConfigError)) throw error;
    console.log(`PostgreSQL server: skipped (${error.message.replace(/\s+/g, ' ')})`);
  } finally {
    await database.drop();
  }
}
