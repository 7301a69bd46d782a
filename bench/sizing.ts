import path from 'node:path';
import { pino } from 'pino';
import { loadBeir, ingestCorpus, SCIFACT_DIR } from '../eval/scifact.js';
import { openPglite, type Database } from '../infra/postgres/database.js';
import { loadConfig } from '../src/config.js';
import { openLedger } from '../src/main.js';
import { scratchDir } from './scratchDir.js';

/**
 * Disk per chunk and per vector, for sizing a deployment: ingests BEIR SciFact (CTX_BENCH_CORPUS
 * names another BEIR folder) into an embedded ledger without embeddings and prints each table's
 * size (indexes and TOAST included) per chunk; then loads CTX_BENCH_VECTORS random 384-dimension
 * vectors into a pgvector table, builds its HNSW index (cosine, as the semantic index does) and
 * prints bytes per vector for the table and for the index.
 */
const CORPUS = process.env.CTX_BENCH_CORPUS ?? SCIFACT_DIR;
const VECTORS = Number(process.env.CTX_BENCH_VECTORS ?? 20_000);
const DIMENSIONS = 384;

const tableSizes = (db: Database) =>
  db.query<{ name: string; bytes: string }>(
    `SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
        AND n.nspname NOT LIKE 'pg_toast%'
      ORDER BY pg_total_relation_size(c.oid) DESC`,
  );

const perChunk = async () => {
  const corpus = loadBeir(CORPUS);
  const dataDir = scratchDir('ctx-bench-sizing-');
  const env = { ...process.env, CTX_EMBEDDINGS__PROVIDER: 'none' };
  const ledger = await openLedger(loadConfig({ env, overrides: { storage: { dataDir } } }), {
    logger: pino({ level: 'warn' }),
  });
  try {
    await ingestCorpus(ledger, corpus, undefined, path.basename(CORPUS));
    // The embedded keyword index holds one row per chunk.
    const [counts] = await ledger.db.query<{
      events: string;
      chunks: string;
      texts: string;
      text_bytes: string;
    }>(
      `SELECT (SELECT count(*) FROM ledger_events)::text AS events,
              (SELECT count(*) FROM search_keyword)::text AS chunks,
              (SELECT count(*) FROM content_blobs)::text AS texts,
              (SELECT sum(octet_length(content)) FROM content_blobs)::text AS text_bytes`,
    );
    const chunks = Number(counts!.chunks);
    console.log(
      `${corpus.documents.length} documents, ${counts!.events} events, ${chunks} chunks, ` +
        `${counts!.texts} distinct texts (bodies and chunks) of ${counts!.text_bytes} bytes`,
    );
    console.log('table                                   bytes  bytes/chunk');
    for (const { name, bytes } of await tableSizes(ledger.db)) {
      if (Number(bytes) < 65_536) continue; // empty tables: their pages and indexes only
      console.log(
        `${name.padEnd(32)} ${bytes.padStart(12)} ${(Number(bytes) / chunks).toFixed(0).padStart(10)}`,
      );
    }
  } finally {
    await ledger.close();
  }
};

const randomUnitVector = (): string => {
  const v = Array.from({ length: DIMENSIONS }, () => Math.random() - 0.5);
  const norm = Math.hypot(...v);
  return `[${v.map((x) => (x / norm).toFixed(6)).join(',')}]`;
};

const perVector = async () => {
  const db = await openPglite();
  try {
    await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
    await db.exec(`CREATE TABLE bench_vectors (id integer PRIMARY KEY, value vector(${DIMENSIONS}))`);
    for (let i = 0; i < VECTORS; i += 500) {
      const rows = Array.from(
        { length: Math.min(500, VECTORS - i) },
        (_, j) => `(${i + j}, '${randomUnitVector()}')`,
      );
      await db.exec(`INSERT INTO bench_vectors VALUES ${rows.join(',')}`);
    }
    const size = async (what: string) =>
      Number((await db.query<{ bytes: string }>(`SELECT ${what}::text AS bytes`))[0]!.bytes);
    const table = await size(`pg_total_relation_size('bench_vectors')`);
    const started = performance.now();
    await db.exec('CREATE INDEX bench_vectors_hnsw ON bench_vectors USING hnsw (value vector_cosine_ops)');
    const buildSeconds = (performance.now() - started) / 1000;
    const index = await size(`pg_relation_size('bench_vectors_hnsw')`);
    console.log(
      `${VECTORS} vectors of ${DIMENSIONS} dimensions: table ${(table / VECTORS).toFixed(0)} bytes/vector, ` +
        `HNSW index ${(index / VECTORS).toFixed(0)} bytes/vector (built in ${buildSeconds.toFixed(1)} s), ` +
        `${((table + index) / VECTORS).toFixed(0)} bytes/vector in all: ` +
        `${(((1024 ** 3 / (table + index)) * VECTORS) / 1e6).toFixed(2)} M vectors per GB`,
    );
  } finally {
    await db.close();
  }
};

export const run = async (): Promise<void> => {
  await perChunk();
  await perVector();
};
