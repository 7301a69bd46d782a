import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { createLuaPool } from '../infra/lua/luaPool.js';
import { loadingHost } from '../infra/lua/scriptHost.js';
import { loadConfig } from '../src/config.js';
import { openLedger, startServer } from '../src/main.js';
import { createExtensionsModule } from '../src/modules/extensionsModule.js';
import { MODULES } from '../src/modules/index.js';
import type { ContextTools } from '../src/ports/contextTools.js';
import { scratchDir } from './scratchDir.js';

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../examples');
const DURATION_MS = 5000;

/** Twenty fixed hits: the bench measures the Lua side of ctx.search, not a search engine. */
const hits = Array.from({ length: 20 }, (_, i) => ({ id: `doc-${i}`, title: `Document ${i}`, source: 'bench', source_id: `d${i}`, score: 1 / (i + 1), snippet: 'text', source_url: null }));
const contextTools: ContextTools = {
  search: (_query, options) => Promise.resolve({ results: hits.slice(0, options.limit ?? 10) }),
  get: () => Promise.resolve(null),
  sources: () => Promise.resolve({ sources: [] }),
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

const megabytes = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

/** What a fresh worker costs: its first script against the next ones on the same worker. */
const workerStart = async () => {
  const limits = { timeoutMs: 5000, memoryBytes: 64 * 2 ** 20, instructionBudget: 1e9 };
  const job = { source: 'return { execute = function() return 1 end }', chunkName: 'one.lua', kind: 'tool' as const, entry: 'execute' };
  const host = loadingHost(pino({ level: 'silent' }));
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < 5; i++) {
    const pool = createLuaPool({ limits, maxConcurrent: 1 });
    let t = performance.now();
    await pool.run(job, host);
    cold.push(performance.now() - t);
    for (let j = 0; j < 20; j++) {
      t = performance.now();
      await pool.run(job, host);
      warm.push(performance.now() - t);
    }
    await pool.close();
  }
  cold.sort((a, b) => a - b);
  warm.sort((a, b) => a - b);
  console.log(
    `worker start (${import.meta.url.endsWith('.ts') ? 'from source, through tsx' : 'built'}): first script on a new worker p50 ${percentile(cold, 50).toFixed(1)} ms, ` +
      `next ones p50 ${percentile(warm, 50).toFixed(2)} ms, p95 ${percentile(warm, 95).toFixed(2)} ms`,
  );
};

/** Forty callers at once, each building a 55 MB string: memory before and after, and /health meanwhile. */
const manyLargeCalls = async (url: string) => {
  const rss = () => {
    (globalThis as { gc?: () => void }).gc?.();
    return process.memoryUsage().rss;
  };
  const before = rss();
  let running = true;
  const healthLatencies: number[] = [];
  const polling = (async () => {
    while (running) {
      const t = performance.now();
      await fetch(`${url}/health`);
      healthLatencies.push(performance.now() - t);
    }
  })();
  const statuses = await Promise.all(
    Array.from({ length: 40 }, () =>
      fetch(`${url}/tools/big_string`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then((r) => r.status),
    ),
  );
  const peak = process.memoryUsage().rss;
  running = false;
  await polling;
  const count = (status: number) => statuses.filter((s) => s === status).length;
  healthLatencies.sort((a, b) => a - b);
  console.log(
    `40 concurrent 55 MB calls: ${count(200)} ran, ${count(503)} refused as busy, others ${40 - count(200) - count(503)}; ` +
      `RSS ${megabytes(before)} before, ${megabytes(peak)} at the end, ${megabytes(rss())} after; ` +
      `/health meanwhile p50 ${percentile(healthLatencies, 50).toFixed(1)} ms, max ${(healthLatencies.at(-1) ?? 0).toFixed(1)} ms (${healthLatencies.length} polls)`,
  );
};

/** Calls one tool over HTTP (validation, Lua state, audit event) back to back for a few seconds. */
export async function run(): Promise<void> {
  await workerStart();
  const toolsDir = scratchDir('ctx-bench-lua-tools-');
  for (const file of ['wordCount.lua', 'relatedTitles.lua']) writeFileSync(path.join(toolsDir, file), readFileSync(path.join(examples, 'tools', file)));
  writeFileSync(
    path.join(toolsDir, 'bigString.lua'),
    'return { name = "big_string", description = "55 MB", execute = function() return #string.rep("x", 55 * 1024 * 1024) end }',
  );
  const config = loadConfig({
    env: {
      CTX_EXTENSIONS__TOOLS_DIR: toolsDir,
      CTX_EXTENSIONS__AGENTS_DIR: path.join(examples, 'agents'),
      // The bench calls back to back, far past the per-caller limit of the tool API.
      CTX_SERVER__TOOLS_PER_MINUTE: '100000000',
      // Room for the 55 MB string of the concurrency case (string.rep's buffer grows past it).
      CTX_EXTENSIONS__MEMORY_MB: '128',
      CTX_EMBEDDINGS__PROVIDER: 'none',
    },
    overrides: { storage: { dataDir: scratchDir('ctx-bench-lua-') }, server: { bind: '127.0.0.1:0' } },
  });
  const ledger = await openLedger(config, {
    logger: pino({ level: 'silent' }),
    modules: [...MODULES.filter((m) => m.name !== 'extensions'), createExtensionsModule({ contextTools })],
  });
  const server = await startServer(ledger);
  try {
    const cases = [
      { label: 'trivial tool (word_count)', tool: 'word_count', payload: { text: 'the quick brown fox jumps over the lazy dog' } },
      { label: 'tool calling ctx.search (related_titles)', tool: 'related_titles', payload: { topic: 'bench', limit: 10 } },
    ];
    for (const { label, tool, payload } of cases) {
      for (let i = 0; i < 20; i++) await server.app.inject({ method: 'POST', url: `/tools/${tool}`, payload });
      const latencies: number[] = [];
      const started = performance.now();
      while (performance.now() - started < DURATION_MS) {
        const t = performance.now();
        const response = await server.app.inject({ method: 'POST', url: `/tools/${tool}`, payload });
        if (response.statusCode !== 200) throw new Error(`${tool} answered ${response.statusCode}: ${response.body}`);
        latencies.push(performance.now() - t);
      }
      const elapsedS = (performance.now() - started) / 1000;
      latencies.sort((a, b) => a - b);
      console.log(
        `${label}: ${(latencies.length / elapsedS).toFixed(0)} calls/s, p50 ${percentile(latencies, 50).toFixed(2)} ms, p95 ${percentile(latencies, 95).toFixed(2)} ms (${latencies.length} calls, sequential)`,
      );
    }
    await manyLargeCalls(server.url);
  } finally {
    await server.close();
  }
}
