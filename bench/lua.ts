import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { openLedger, startServer } from '../src/main.js';
import { createExtensionsModule } from '../src/modules/extensionsModule.js';
import { MODULES } from '../src/modules/index.js';
import type { ContextTools } from '../src/ports/contextTools.js';

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

/** Calls one tool over HTTP (validation, Lua state, audit event) back to back for a few seconds. */
export async function run(): Promise<void> {
  const config = loadConfig({
    env: {
      CTX_EXTENSIONS__TOOLS_DIR: path.join(examples, 'tools'),
      CTX_EXTENSIONS__AGENTS_DIR: path.join(examples, 'agents'),
      // The bench calls back to back, far past the per-caller limit of the tool API.
      CTX_SERVER__TOOLS_PER_MINUTE: '100000000',
    },
    overrides: { storage: { dataDir: mkdtempSync(path.join(tmpdir(), 'ctx-bench-lua-')) }, server: { bind: '127.0.0.1:0' } },
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
  } finally {
    await server.close();
  }
}
