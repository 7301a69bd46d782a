import { cpSync, readdirSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { createPostgresContentStore } from '../../infra/postgres/postgresContentStore.js';
import type { Database } from '../../infra/postgres/database.js';
import { openPgliteThread } from '../../infra/postgres/threadedPglite.js';
import { buildValueIndex, valueIndexName } from '../../infra/search/postgresChunkIndex.js';
import { createPgvectorIndex, HNSW_BUILD_MEMORY_MB } from '../../infra/search/pgvectorIndex.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { semanticIndexProjection } from '../../projections/search/semanticIndex.js';
import type { ContentStore } from '../../src/ports/contentStore.js';
import type { Embedder } from '../../src/ports/embedder.js';
import type { VectorIndex } from '../../src/ports/searchIndex.js';
import { scratchDir } from '../scratchDir.js';

/**
 * The semantic index at scale without a model: the table the semantic projection writes, filled
 * with random unit vectors (384 dimensions, as bge-small), its HNSW index built with the product's
 * own definition, then searched through the product's VectorIndex. Random vectors have no clusters,
 * which makes them the hard case for a graph index: recall on real embeddings is at least as good.
 */
export const DIMENSIONS = 384;
const TABLE = 'search_semantic';
const INDEX = valueIndexName(TABLE);
export const QUERIES = Number(process.env.CTX_BENCH_QUERIES ?? 100);
const TOP = 10;
/** What the search operation asks the index for when a caller wants ten: see candidatesFor in searchDocuments. */
const SEARCH_CANDIDATES = 50;
/** hnsw.ef_search values tried beside the product's, to say where recall stands. */
const EF_SWEEP = [40, 100, 200, 400, 800];
const LOAD_SLICE = 50_000;
/** maintenance_work_mem (MB) for the HNSW build: the product's by default; CTX_BENCH_BUILD_MEMORY_MB=0 leaves the database's. */
const BUILD_MEMORY_MB = Number(process.env.CTX_BENCH_BUILD_MEMORY_MB ?? HNSW_BUILD_MEMORY_MB);

/** Only the dimensions are read: the bench writes the vectors itself. */
const randomVectors: Embedder = {
  model: 'random unit vectors',
  dimensions: DIMENSIONS,
  embed: () => Promise.reject(new Error('The bench writes its vectors itself')),
  close: () => Promise.resolve(),
};

/** The semantic index's table (created as the product creates it) and its search. */
export const openSemanticIndex = async (db: Database, content: ContentStore): Promise<VectorIndex> =>
  (await createPgvectorIndex(db, content, semanticIndexProjection(randomVectors))).index;

/** A random unit vector in SQL, drawn again for each row that `column` belongs to. */
const randomUnitSql = (column: string) =>
  `l2_normalize(ARRAY(SELECT random_normal() + 0 * ${column} FROM generate_series(1, ${DIMENSIONS}))::vector)`;

const COLUMNS = 'chunk_id, document_id, project, source, source_id, title, tags, updated_at, chunk_index, value';

/** Gaussian coordinates, normalised: uniform on the sphere. */
export const randomUnitVector = (): Float32Array => {
  const v = new Float32Array(DIMENSIONS);
  for (let i = 0; i < DIMENSIONS; i++)
    v[i] = Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};

const literal = (v: Float32Array) => `[${Array.from(v).join(',')}]`;

/**
 * Loads rows with the HNSW index dropped, then builds it with the definition the product gave it,
 * as the product builds it (as a rebuild does: bulk load, then the graph); returns the seconds of
 * load and of build.
 */
const loadThenIndex = async (db: Database, load: () => Promise<void>) => {
  const [index] = await db.query<{ definition: string }>(`SELECT pg_get_indexdef('${INDEX}'::regclass) AS definition`);
  await db.exec(`DROP INDEX ${INDEX}`);
  const loading = performance.now();
  await load();
  const building = performance.now();
  await buildValueIndex(db, { valueIndex: () => index!.definition, buildMemoryMb: BUILD_MEMORY_MB }, TABLE, INDEX);
  const built = performance.now();
  await db.exec(`ANALYZE ${TABLE}`);
  return { loadSeconds: (building - loading) / 1000, buildSeconds: (built - building) / 1000 };
};

/** N synthetic chunks, in slices so that a million do not make one transaction. */
export const fillSynthetic = (db: Database, n: number) =>
  loadThenIndex(db, async () => {
    for (let from = 1; from <= n; from += LOAD_SLICE) {
      await db.query(
        `INSERT INTO ${TABLE} (${COLUMNS})
         SELECT 'c' || g, 'd' || g, $3, 'bench', 'doc-' || g || '.txt', NULL, '{}', now(), 0, ${randomUnitSql('g')}
         FROM generate_series($1::int, $2::int) AS g`,
        [from, Math.min(n, from + LOAD_SLICE - 1), DEFAULT_PROJECT],
      );
    }
  });

/** One random vector for each chunk the keyword index holds: hybrid search then fuses the same chunks. */
export const fillFromKeywordIndex = (db: Database) =>
  loadThenIndex(db, async () => {
    await db.exec(
      `INSERT INTO ${TABLE} (${COLUMNS})
       SELECT chunk_id, document_id, project, source, source_id, title, tags, updated_at, chunk_index, ${randomUnitSql('k.chunk_index')}
       FROM search_keyword AS k`,
    );
  });

/**
 * Puts each chunk's vector in the embedding cache under `model`, keyed as the cached embedder keys
 * the passage it would embed (the document's title and the chunk's text; see semanticPassage), so
 * that a rebuild of the semantic index finds every vector there and embeds nothing, as a rebuild
 * of a ledger whose chunks the model has embedded once does. Returns the vectors cached.
 */
export const cacheIndexVectors = async (db: Database, model: string): Promise<number> => {
  const [cached] = await db.query<{ n: number }>(
    `WITH cached AS (
       INSERT INTO embedding_cache (model, content_hash, vector)
       SELECT $1, encode(sha256(convert_to(concat_ws(E'\\n', NULLIF(e.data->>'title', ''), NULLIF(b.content, '')), 'UTF8')), 'hex'),
              s.value::real[]
       FROM ledger_events AS e
       CROSS JOIN LATERAL json_array_elements(e.data->'chunks') AS c
       JOIN content_blobs AS b ON b.hash = c->>'textHash'
       JOIN ${TABLE} AS s ON s.chunk_id = c->>'id'
       WHERE e.event_type = 'DocumentIngested'
       ON CONFLICT (model, content_hash) DO NOTHING
       RETURNING 1)
     SELECT count(*)::int AS n FROM cached`,
    [model],
  );
  return cached!.n;
};

export const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

export const dirBytes = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const full = path.join(dir, entry.name);
    return sum + (entry.isDirectory() ? dirBytes(full) : entry.isFile() ? statSync(full).size : 0);
  }, 0);

export const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
export const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** The cosine query the product runs, with ef_search given, or with index scans off for the exact answer. */
const nearest = (db: Database, vector: Float32Array, limit: number, how: { efSearch: number } | 'exact') =>
  db.transaction(async (tx) => {
    await tx.query(
      how === 'exact'
        ? `SELECT set_config('enable_indexscan', 'off', true)`
        : `SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', '${how.efSearch}', true)`,
    );
    const rows = await tx.query<{ chunk_id: string; distance: number }>(
      `SELECT chunk_id, value <=> $1::vector AS distance FROM ${TABLE} WHERE project = $2 ORDER BY value <=> $1::vector LIMIT $3`,
      [literal(vector), DEFAULT_PROJECT, limit],
    );
    return rows.map((r): Neighbour => ({ id: r.chunk_id, distance: r.distance }));
  });

/** Which scan the planner picks for the product's query at the product's settings. */
const plannedScan = async (db: Database, vector: Float32Array) => {
  const plan = await db.transaction(async (tx) => {
    await tx.query(`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', '40', true)`);
    return tx.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT chunk_id FROM ${TABLE} WHERE project = $2 ORDER BY value <=> $1::vector LIMIT ${TOP}`,
      [literal(vector), DEFAULT_PROJECT],
    );
  });
  const lines = plan.map((row) => row['QUERY PLAN']);
  return lines.some((line) => line.includes(`Index Scan using ${INDEX}`)) ? 'HNSW index' : 'sequential scan';
};

interface Neighbour {
  id: string;
  distance: number;
}

interface Timed {
  p50: number;
  p95: number;
  recall: number;
  /** How much farther, on average, the ten found are than the exact ten (cosine distance, in %). */
  farther: number;
}

const meanDistance = (top: readonly Neighbour[]) => top.reduce((sum, n) => sum + n.distance, 0) / Math.max(1, top.length);

/** Latency of `search` over the queries, and the share of the exact top ten it finds in its own top ten. */
const timedRecall = async (
  queries: readonly Float32Array[],
  exact: readonly Neighbour[][],
  search: (q: Float32Array) => Promise<Neighbour[]>,
): Promise<Timed> => {
  const took: number[] = [];
  let found = 0;
  let farther = 0;
  for (const [i, q] of queries.entries()) {
    const started = performance.now();
    const top = (await search(q)).slice(0, TOP);
    took.push(performance.now() - started);
    const truth = new Set(exact[i]!.map((n) => n.id));
    found += top.filter((n) => truth.has(n.id)).length;
    farther += meanDistance(top) / meanDistance(exact[i]!) - 1;
  }
  return {
    p50: percentile(took, 50),
    p95: percentile(took, 95),
    recall: found / (queries.length * TOP),
    farther: (100 * farther) / queries.length,
  };
};

export interface SemanticFigures {
  /** What the vectors are: random unit vectors, or a ledger's own embeddings. */
  kind: string;
  vectors: number;
  loadSeconds: number;
  buildSeconds: number;
  tableBytes: number;
  indexBytes: number;
  walBytes: number | null;
  dataBytes: number | null;
  rss: number;
  plan: string;
  exact: { p50: number; p95: number };
  /** The index asked for ten (ef_search 40, as cosineSearch sets it). */
  top10: Timed;
  /** The index asked for the fifty candidates a search for ten asks (ef_search 100), its first ten. */
  candidates: Timed;
  sweep: { efSearch: number; figures: Timed }[];
  seconds: number;
}

/** Searches a filled index: exact scan, the product's HNSW search, and a sweep of ef_search. */
export const measureSemantic = async (
  db: Database,
  index: VectorIndex,
  dataDir: string | null,
  fill: { loadSeconds: number; buildSeconds: number },
  startedAt: number,
  given?: { kind: string; queries: Float32Array[] },
): Promise<SemanticFigures> => {
  const [{ n }] = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${TABLE}`)) as [{ n: number }];
  const queries = given?.queries ?? Array.from({ length: QUERIES }, randomUnitVector);
  const filters = { project: DEFAULT_PROJECT };
  const product = async (q: Float32Array, limit: number) =>
    (await index.search(q, filters, limit)).map((hit): Neighbour => ({ id: hit.chunkId, distance: 1 - hit.score }));
  for (const q of queries.slice(0, 10)) await product(q, TOP); // pages into memory
  const exactTook: number[] = [];
  const exact: Neighbour[][] = [];
  for (const q of queries) {
    const started = performance.now();
    exact.push(await nearest(db, q, TOP, 'exact'));
    exactTook.push(performance.now() - started);
  }
  const top10 = await timedRecall(queries, exact, (q) => product(q, TOP));
  const candidates = await timedRecall(queries, exact, (q) => product(q, SEARCH_CANDIDATES));
  const sweep = [];
  for (const efSearch of EF_SWEEP)
    sweep.push({ efSearch, figures: await timedRecall(queries, exact, (q) => nearest(db, q, TOP, { efSearch })) });
  const size = async (what: string) => Number((await db.query<{ b: string }>(`SELECT ${what}::text AS b`))[0]!.b);
  const indexBytes = await size(`pg_relation_size('${INDEX}')`);
  return {
    kind: given?.kind ?? 'random',
    vectors: n,
    ...fill,
    tableBytes: (await size(`pg_total_relation_size('${TABLE}')`)) - indexBytes,
    indexBytes,
    walBytes: dataDir ? dirBytes(path.join(dataDir, 'pgdata', 'pg_wal')) : null,
    dataBytes: dataDir ? dirBytes(dataDir) : null,
    rss: process.memoryUsage().rss,
    plan: await plannedScan(db, queries[0]!),
    exact: { p50: percentile(exactTook, 50), p95: percentile(exactTook, 95) },
    top10,
    candidates,
    sweep,
    seconds: (performance.now() - startedAt) / 1000,
  };
};

/** A run of its own: a fresh embedded database holding only the semantic index, with N vectors. */
export const measureSyntheticIndex = async (n: number): Promise<SemanticFigures> => {
  const startedAt = performance.now();
  const dataDir = scratchDir('ctx-bench-vectors-');
  console.log(`  ${n} random unit vectors in ${dataDir}; load average ${load()}`);
  const db = await openPgliteThread(path.join(dataDir, 'pgdata'));
  try {
    const index = await openSemanticIndex(db, await createPostgresContentStore(db));
    const fill = await fillSynthetic(db, n);
    return await measureSemantic(db, index, dataDir, fill, startedAt);
  } finally {
    await db.close();
  }
};

/**
 * A ledger's own semantic index (searched in a copy of its data directory: opening one writes to
 * it), with real queries embedded by its model: how the graph does on embeddings rather than noise.
 */
export const measureLedgerIndex = async (
  source: string,
  kind: string,
  embedQueries: (db: Database) => Promise<Float32Array[]>,
): Promise<SemanticFigures> => {
  const startedAt = performance.now();
  const dataDir = scratchDir('ctx-bench-vectors-');
  cpSync(source, dataDir, { recursive: true });
  console.log(`  ${kind}: the semantic index of ${source}, copied to ${dataDir}; load average ${load()}`);
  const db = await openPgliteThread(path.join(dataDir, 'pgdata'));
  try {
    const index = await openSemanticIndex(db, await createPostgresContentStore(db));
    const [{ rows }] = (await db.query<{ rows: number }>(`SELECT count(*)::int AS rows FROM ${TABLE}`)) as [{ rows: number }];
    if (rows === 0) throw new Error(`${source} has no semantic index to measure (its ${TABLE} is empty)`);
    await db.exec(`ANALYZE ${TABLE}`);
    const queries = (await embedQueries(db)).slice(0, QUERIES);
    return await measureSemantic(db, index, dataDir, { loadSeconds: NaN, buildSeconds: NaN }, startedAt, { kind, queries });
  } finally {
    await db.close();
  }
};

const ms = (x: number) => x.toFixed(1);
const pair = (t: { p50: number; p95: number }) => `${ms(t.p50)} / ${ms(t.p95)}`;

/** The figures of every size as tables: sizes, then latency and recall, then ef_search. */
export const printSemanticTables = (rows: readonly SemanticFigures[]) => {
  const table = (header: string[], lines: string[][]) => {
    const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
    const line = (cells: string[]) => `  | ${cells.map((c, i) => c.padStart(widths[i]!)).join(' | ')} |`;
    console.log(line(header));
    console.log(`  |${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
    for (const l of lines) console.log(line(l));
  };
  const opt = (bytes: number | null) => (bytes === null ? '—' : mib(bytes));
  console.log('\n  semantic index, disk and memory (MiB):');
  table(
    ['vectors', 'kind', 'load s', 'HNSW build s', 'table', 'HNSW index', 'pg_wal', 'data dir', 'RSS', 'run s'],
    rows.map((r) => [
      String(r.vectors),
      r.kind,
      Number.isNaN(r.loadSeconds) ? '—' : r.loadSeconds.toFixed(1),
      Number.isNaN(r.buildSeconds) ? '—' : r.buildSeconds.toFixed(1),
      mib(r.tableBytes),
      mib(r.indexBytes),
      opt(r.walBytes),
      opt(r.dataBytes),
      mib(r.rss),
      r.seconds.toFixed(0),
    ]),
  );
  console.log(
    `\n  semantic top ${TOP}, ${QUERIES} queries (random unit vectors, or the corpus's own queries embedded), p50 / p95 ms, recall@${TOP} against the exact scan ` +
      `(and how much farther the ten found are than the exact ten, mean cosine distance):`,
  );
  const recall = (t: Timed) => `${t.recall.toFixed(3)} (+${t.farther.toFixed(2)}%)`;
  table(
    ['vectors', 'kind', 'planner picks', 'exact scan', `HNSW, limit ${TOP} (ef 40)`, 'recall', `HNSW, limit ${SEARCH_CANDIDATES} (ef 100)`, 'recall'],
    rows.map((r) => [
      String(r.vectors),
      r.kind,
      r.plan,
      pair(r.exact),
      pair(r.top10),
      recall(r.top10),
      pair(r.candidates),
      recall(r.candidates),
    ]),
  );
  console.log(`\n  hnsw.ef_search against recall@${TOP} (limit ${TOP}), p50 / p95 ms:`);
  table(
    ['vectors', 'kind', ...EF_SWEEP.map((ef) => `ef ${ef}`)],
    rows.map((r) => [String(r.vectors), r.kind, ...r.sweep.map(({ figures }) => `${figures.recall.toFixed(3)} at ${pair(figures)}`)]),
  );
};
