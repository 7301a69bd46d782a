import { realpathSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { openLedger, startServer } from '../src/main.js';
import { makeRepo } from '../test/jobs/jobsSupport.js';
import { scratchDir } from './scratchDir.js';

/**
 * Serving while indexing: three jobs index large real trees with the configured embedder (the local
 * model by default) while one client polls over HTTP (get_job_status and list_background_jobs through
 * MCP on /mcp, POST /api/v1/search). Prints status, list and search latency during indexing, each
 * job's share of the files indexed, the time to cancel a running, a scanning and a blocked job, and the
 * time the server takes to close while jobs and the semantic index are still working.
 * BENCH_LOAD_SECONDS sets how long the client polls (default 60), BENCH_LOAD_TREES the trees (comma-separated,
 * from the repository root), BENCH_CANCEL_LIMIT_SECONDS how long a cancel is waited for (default 600).
 */
const repoRoot = path.resolve(import.meta.dirname, '..');
const TREES = (process.env.BENCH_LOAD_TREES ?? 'src,node_modules/typescript/lib,node_modules/zod')
  .split(',')
  .map((t) => realpathSync(path.resolve(repoRoot, t)));
/** A tree big enough to be still scanning when it is cancelled. */
const SCAN_TREE = realpathSync(path.resolve(repoRoot, 'node_modules'));
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 60);
const CANCEL_LIMIT_MS = Number(process.env.BENCH_CANCEL_LIMIT_SECONDS ?? 600) * 1000;

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};
const summary = (values: readonly number[]) =>
  `p50 ${percentile(values, 50).toFixed(1)} ms, p95 ${percentile(values, 95).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms (n=${values.length})`;
const verdict = (values: readonly number[], targetMs: number) =>
  `${summary(values)}; target p95 <= ${targetMs} ms: ${percentile(values, 95) <= targetMs ? 'met' : 'missed'}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

interface JobStatus {
  status: string;
  files_indexed: number;
  chunks_created: number;
  progress_message: string;
}

const serve = async (env: NodeJS.ProcessEnv) => {
  const config = loadConfig({
    env: { CTX_LOG__LEVEL: 'silent', CTX_MCP__TOOLSETS: 'all', CTX_INGEST__ROOTS: [tmpdir(), repoRoot, SCAN_TREE, ...TREES].join(','), ...process.env, ...env },
    overrides: { storage: { dataDir: scratchDir('ctx-bench-load-') }, server: { bind: '127.0.0.1:0' } },
  });
  const ledger = await openLedger(config, { logger: pino({ level: 'silent' }) });
  const server = await startServer(ledger);
  // The client searches faster than the default 100 a minute: lift the limit, so every answer is a search's.
  const lifted = await fetch(`${server.url}/api/v1/config`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rate_limits: { search_per_minute: 100_000 } }),
  });
  if (!lifted.ok) throw new Error(`could not lift the search rate limit: ${lifted.status} ${await lifted.text()}`);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  const tool = async <T>(name: string, args: Record<string, unknown>): Promise<T> => {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
    return result.structuredContent as T;
  };
  const close = async () => {
    await client.close();
    await server.close();
  };
  return { server, tool, close };
};

type Served = Awaited<ReturnType<typeof serve>>;

const timed = async <T>(work: () => Promise<T>, into: number[]): Promise<T> => {
  const startedAt = performance.now();
  const result = await work();
  into.push(performance.now() - startedAt);
  return result;
};

/** Asks for a cancel and times until the job's status says it is cancelled. */
const cancelTime = async ({ tool }: Served, jobId: string): Promise<string> => {
  const askedAt = performance.now();
  await tool('cancel_job', { job_id: jobId });
  for (;;) {
    const status = await tool<JobStatus>('get_job_status', { job_id: jobId });
    if (status.status === 'cancelled') return `${((performance.now() - askedAt) / 1000).toFixed(2)} s`;
    if (performance.now() - askedAt > CANCEL_LIMIT_MS) return `still ${status.status} after ${CANCEL_LIMIT_MS / 1000} s`;
    await sleep(50);
  }
};

const underLoad = async () => {
  const served = await serve({});
  const { tool, server } = served;
  try {
    const jobs: string[] = [];
    for (const tree of TREES) jobs.push((await tool<{ job_id: string }>('start_indexing_background', { repo_path: tree })).job_id);
    const status: number[] = [];
    const list: number[] = [];
    const search: number[] = [];
    const failedSearches: number[] = [];
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const startedAt = performance.now();
    let i = 0;
    while (performance.now() - startedAt < SECONDS * 1000) {
      await timed(() => tool('get_job_status', { job_id: jobs[i % jobs.length] }), status);
      await timed(() => tool('list_background_jobs', { limit: 50 }), list);
      await timed(async () => {
        const response = await fetch(`${server.url}/api/v1/search`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: `how is a job cancelled ${i}`, top_k: 10 }),
        });
        await response.arrayBuffer();
        if (!response.ok) failedSearches.push(response.status);
      }, search);
      i++;
    }
    loop.disable();
    const figures = await Promise.all(jobs.map((id) => tool<JobStatus>('get_job_status', { job_id: id })));
    const files = figures.reduce((sum, f) => sum + f.files_indexed, 0);
    console.log(`during ${SECONDS} s of indexing with three jobs (load average ${load()}):`);
    console.log(
      `  event loop delay: p50 ${(loop.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms`,
    );
    console.log(`  get_job_status: ${verdict(status, 50)}`);
    console.log(`  list_background_jobs: ${verdict(list, 100)}`);
    console.log(`  POST /api/v1/search: ${verdict(search, 100)}${failedSearches.length ? `; ${failedSearches.length} answered ${[...new Set(failedSearches)].join(', ')}` : ''}`);
    figures.forEach((f, n) =>
      console.log(
        `  job on ${TREES[n]}: ${f.status}, ${f.files_indexed} files, ${f.chunks_created} chunks, ` +
          `share ${files ? ((100 * f.files_indexed) / files).toFixed(0) : 0}% of files indexed ("${f.progress_message}")`,
      ),
    );
    const running = figures.findIndex((f) => f.status === 'running');
    const cancelled = running < 0 ? 'no job running' : await cancelTime(served, jobs[running]!);
    console.log(`  cancel of a running job ("${figures[running]?.progress_message}"): ${cancelled} (load average ${load()})`);
    // A slot is free now: a job on the whole node_modules folder starts and is cancelled while it scans.
    const scanning = (await tool<{ job_id: string }>('start_indexing_background', { repo_path: SCAN_TREE })).job_id;
    await sleep(200);
    const before = await tool<JobStatus>('get_job_status', { job_id: scanning });
    console.log(`  cancel of a scanning job ("${before.progress_message}"): ${await cancelTime(served, scanning)} (load average ${load()})`);
  } finally {
    // Stopped as a user stops it, with the indexes still behind: the time until the process may exit.
    const closingAt = performance.now();
    await served.close();
    console.log(`  server closed with indexing under way in ${((performance.now() - closingAt) / 1000).toFixed(2)} s`);
  }
};

/** An embedding server that is not there: the job blocks on it, and is cancelled while blocked. */
const blocked = async () => {
  const gone = createServer();
  await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', () => resolve()));
  const { port } = gone.address() as AddressInfo;
  await new Promise<void>((resolve) => gone.close(() => resolve()));
  const served = await serve({
    CTX_EMBEDDINGS__PROVIDER: 'http',
    CTX_EMBEDDINGS__URL: `http://127.0.0.1:${port}`,
    CTX_EMBEDDINGS__MODEL: 'absent',
    CTX_EMBEDDINGS__DIMENSIONS: '8',
  });
  try {
    const { job_id } = await served.tool<{ job_id: string }>('start_indexing_background', { repo_path: makeRepo(50, 'bench-blocked-') });
    const waitingSince = performance.now();
    while ((await served.tool<JobStatus>('get_job_status', { job_id })).status !== 'blocked') {
      if (performance.now() - waitingSince > 120_000) throw new Error('the job never blocked');
      await sleep(100);
    }
    console.log(`  cancel of a blocked job: ${await cancelTime(served, job_id)} (load average ${load()})`);
  } finally {
    await served.close();
  }
};

export async function run(): Promise<void> {
  console.log(`load average before ${load()}`);
  await underLoad();
  await blocked();
}
