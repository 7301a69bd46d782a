import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { SCOPES } from '../src/domain/auth.js';
import { createJwtCodec } from '../src/http/api/jwtCodec.js';
import { openLedger, startServer } from '../src/main.js';
import { tempDataDir } from '../test/support/ledger.js';

/**
 * `/api/v1` on loopback with authentication on: search p95 through POST /api/v1/search (bearer
 * token, keyword ranking over the product's own source tree), then autocannon's requests/s and
 * error rate for GET /api/v1/health and for authenticated search.
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

const ROOT = path.resolve(import.meta.dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const QUERIES = [
  'event store append',
  'projection checkpoint',
  'search keyword index',
  'annotation session',
  'job runner cancel',
  'rate limit',
  'config schema',
  'mcp server tool',
  'content store hash',
  'refresh token',
];

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return name.endsWith('.ts') ? [file] : [];
  });

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};

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
  const config = loadConfig({
    env: {
      CTX_AUTH__MODE: 'on',
      CTX_AUTH__JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
      CTX_EMBEDDINGS__PROVIDER: 'none',
      CTX_LOG__LEVEL: 'silent',
    },
    overrides: { storage: { dataDir: tempDataDir('ctx-bench-api-') }, server: { bind: '127.0.0.1:0' } },
  });
  const ledger = await openLedger(config, { logger: pino({ level: 'silent' }) });
  const server = await startServer(ledger);
  try {
    const files = ['src', 'commands', 'queries', 'projections', 'infra'].flatMap((dir) =>
      sourceFiles(path.join(ROOT, dir)),
    );
    const documents = files.map((file) => ({
      source_id: path.relative(ROOT, file),
      title: path.basename(file),
      body: readFileSync(file, 'utf8'),
    }));
    for (let i = 0; i < documents.length; i += 100) {
      await ledger
        .operation('ingest_documents')
        .run(
          { source: 'filesystem', documents: documents.slice(i, i + 100) },
          {
            actor: { subject: 'bench', tenant: 'bench', via: 'cli' },
            correlationId: crypto.randomUUID(),
            project: 'bench',
          },
        );
    }
    await ledger.projections.waitFor(await ledger.store.headPosition(), { timeoutMs: 600_000 });

    const jwt = (await createJwtCodec(config.auth))!;
    const token = jwt.sign({ sub: 'bench', scope: SCOPES.join(' '), tenant_id: 'bench' });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const api = `${server.url}/api/v1`;
    // Lift the per-user budget so the load below measures the server, not the limiter.
    const lifted = await fetch(`${api}/config`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ rate_limits: { search_per_minute: 100_000 } }),
    });
    if (!lifted.ok) throw new Error(`could not lift the search rate limit: ${await lifted.text()}`);

    console.log(
      `corpus: ${documents.length} source files; load average before: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const latencies: number[] = [];
    let failures = 0;
    for (let i = 0; i < 300; i++) {
      const query = QUERIES[i % QUERIES.length]!;
      const startedAt = performance.now();
      const response = await fetch(`${api}/search`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          query,
          top_k: 20,
          work_context: { active_file: 'src/http/api/apiPlugin.ts', open_ticket_ids: ['PROJ-1'] },
        }),
      });
      await response.arrayBuffer();
      latencies.push(performance.now() - startedAt);
      if (response.status !== 200) failures++;
    }
    console.log(
      `POST /api/v1/search (sequential, auth on): p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms, ` +
        `max ${Math.max(...latencies).toFixed(1)} ms (n=${latencies.length}, ${failures} failed)`,
    );

    await cannon('GET /api/v1/health (no auth)', { url: `${api}/health` });
    await cannon('POST /api/v1/search (bearer token)', {
      url: `${api}/search`,
      method: 'POST',
      headers,
      body: JSON.stringify({ query: 'projection checkpoint', top_k: 10 }),
    });
    console.log(
      `load average after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await server.close();
  }
};
