import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { ingestCorpus, loadScifact, ndcgAt10 } from '../eval/scifact.js';
import { loadConfig } from '../src/config.js';
import { SCOPES } from '../src/domain/auth.js';
import { createJwtCodec } from '../src/http/api/jwtCodec.js';
import { openLedger, startServer } from '../src/main.js';
import { DEFAULT_PROJECT } from '../src/domain/workspace.js';

/**
 * `/api/v1` on loopback with authentication on, over BEIR SciFact (5,183 abstracts) embedded with
 * the local model: the latency of POST /api/v1/search (hybrid, bearer token) for each SciFact test
 * query, first with the query never seen before (its embedding computed) and then asked again (its
 * embedding cached), with nDCG@10 as a check on the answers; then autocannon's requests/s and error
 * rate for GET /api/v1/health and for authenticated search.
 *
 * The corpus is ingested once into CTX_BENCH_DATA_DIR (default: <tmp>/ctx-bench-api-scifact) and
 * reused: a re-run appends nothing and embeds nothing. Needs CTX_EMBEDDINGS__MODEL_DIR.
 */
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const TARGET_P95_MS = 50;

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const cannon = async (title: string, options: Record<string, unknown>) => {
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options });
  const total = result['2xx'] + result.non2xx + result.errors + result.timeouts;
  const errorRate = total ? (result.non2xx + result.errors + result.timeouts) / total : 0;
  console.log(
    `${title}: ${result.requests.average.toFixed(0)} req/s (${total} requests in ${SECONDS} s, ${CONNECTIONS} connections), ` +
      `latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, error rate ${(errorRate * 100).toFixed(2)}%`,
  );
};

export const run = async () => {
  if (!process.env.CTX_EMBEDDINGS__MODEL_DIR) {
    console.error('bench api searches in hybrid mode: set CTX_EMBEDDINGS__MODEL_DIR to the local model folder (see README)');
    process.exitCode = 2;
    return;
  }
  const dataDir = process.env.CTX_BENCH_DATA_DIR ?? path.join(tmpdir(), 'ctx-bench-api-scifact');
  mkdirSync(dataDir, { recursive: true });
  const config = loadConfig({
    env: {
      ...process.env,
      CTX_AUTH__MODE: 'on',
      CTX_AUTH__JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
      CTX_LOG__LEVEL: 'silent',
    },
    overrides: { storage: { dataDir }, server: { bind: '127.0.0.1:0' } },
  });
  const ledger = await openLedger(config, { logger: pino({ level: 'silent' }) });
  const server = await startServer(ledger);
  try {
    const corpus = loadScifact();
    const seconds = await ingestCorpus(ledger, corpus, (done) => process.stderr.write(`\ringested ${done}`));
    process.stderr.write('\n');
    console.log(
      `corpus: SciFact, ${corpus.documents.length} documents in ${dataDir} (ingest and indexing ${seconds.toFixed(1)} s; ` +
        `nothing is appended or embedded again on a re-run)`,
    );

    // The corpus is in the default project, so the caller is its tenant.
    const jwt = (await createJwtCodec(config.auth))!;
    const token = jwt.sign({ sub: 'bench', scope: SCOPES.join(' '), tenant_id: DEFAULT_PROJECT });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const api = `${server.url}/api/v1`;
    // Lift the per-user budget so the load below measures the server, not the limiter.
    const lifted = await fetch(`${api}/config`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ rate_limits: { search_per_minute: 100_000 } }),
    });
    if (!lifted.ok) throw new Error(`could not lift the search rate limit: ${await lifted.text()}`);

    const queries = [...corpus.qrels].flatMap(([id, relevant]) => {
      const text = corpus.queries.get(id);
      return text ? [{ text, relevant }] : [];
    });
    const search = async (query: string) => {
      const startedAt = performance.now();
      const response = await fetch(`${api}/search`, { method: 'POST', headers, body: JSON.stringify({ query, top_k: 10 }) });
      const body = (await response.json()) as { results?: { metadata: { path: string } }[] };
      return { ms: performance.now() - startedAt, ok: response.status === 200, ids: (body.results ?? []).map((r) => r.metadata.path) };
    };
    const pass = async (title: string) => {
      const latencies: number[] = [];
      const scores: number[] = [];
      let failures = 0;
      for (const { text, relevant } of queries) {
        const { ms, ok, ids } = await search(text);
        latencies.push(ms);
        scores.push(ndcgAt10(ids, relevant));
        if (!ok) failures++;
      }
      const p95 = percentile(latencies, 95);
      console.log(
        `POST /api/v1/search, hybrid, ${title} (sequential, auth on): p50 ${percentile(latencies, 50).toFixed(1)} ms, ` +
          `p95 ${p95.toFixed(1)} ms (target < ${TARGET_P95_MS} ms: ${p95 < TARGET_P95_MS ? 'met' : 'missed'}), max ${Math.max(...latencies).toFixed(1)} ms, ` +
          `nDCG@10 ${(scores.reduce((a, b) => a + b, 0) / scores.length).toFixed(4)} (n=${latencies.length}, ${failures} failed)`,
      );
    };

    console.log(`load average before: ${load()}`);
    // Query vectors are remembered in this process only, so the first pass embeds every query.
    await search('warm-up: the model loads on first use');
    await pass('queries never seen before (query embedded)');
    await pass('the same queries again (query embedding cached)');

    await cannon('GET /api/v1/health (no auth)', { url: `${api}/health` });
    await cannon('POST /api/v1/search (bearer token, hybrid, SciFact queries seen before)', {
      url: `${api}/search`,
      method: 'POST',
      headers,
      requests: queries.map(({ text }) => ({ method: 'POST', path: '/api/v1/search', headers, body: JSON.stringify({ query: text, top_k: 10 }) })),
    });
    console.log(`load average after: ${load()}`);
  } finally {
    await server.close();
  }
};
