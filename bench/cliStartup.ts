import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_MODEL_DIR } from '../src/config.js';
import { BIN, ensureBuilt } from '../test/support/builtCli.js';
import { scratchDir } from './scratchDir.js';

/**
 * What a person waits for at the terminal: the built `ctx` (as `npx ctx` runs it) from spawn to
 * exit, on an embedded data directory in a fresh home, and `ctx serve` from spawn to its first
 * answer on /health. The local model is the one `ctx model fetch` put in this user's cache, if any.
 */
const RUNS = Number(process.env.CTX_BENCH_RUNS ?? 9);

/** The CLI's module graph, which `bin/ctx.js` loads before running anything. */
const PROGRAM = path.resolve(path.dirname(BIN), '../dist/src/cli/program.js');

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const timed = (args: string[], env: NodeJS.ProcessEnv): number => {
  const started = performance.now();
  const run = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ctx ${args.join(' ')} exited with ${run.status}: ${run.stderr}`);
  return performance.now() - started;
};

/** Milliseconds from spawning `ctx serve` to /health answering, then stops it. */
const serveUntilHealthy = async (env: NodeJS.ProcessEnv, port: number): Promise<number> => {
  const started = performance.now();
  const server = spawn(process.execPath, [BIN, 'serve', '--bind', `127.0.0.1:${port}`], { env, stdio: 'ignore' });
  try {
    for (;;) {
      if (server.exitCode !== null) throw new Error(`ctx serve exited with ${server.exitCode}`);
      const healthy = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
      if (healthy) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
};

const report = (what: string, times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  console.log(
    `${what.padEnd(44)} p50 ${seconds(percentile(sorted, 50))}  min ${seconds(sorted[0]!)}  max ${seconds(sorted.at(-1)!)}  (${sorted.length} runs)`,
  );
};

export const run = async (): Promise<void> => {
  await ensureBuilt();
  const home = scratchDir('ctx-bench-startup-');
  const env = { ...process.env, HOME: home, CTX_EMBEDDINGS__MODEL_DIR: DEFAULT_MODEL_DIR };
  console.log(`models from ${DEFAULT_MODEL_DIR}${existsSync(DEFAULT_MODEL_DIR) ? '' : ' (none there: semantic search is off)'}`);
  const loadOnly = Array.from({ length: RUNS }, () => {
    const started = performance.now();
    spawnSync(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(PROGRAM)})`]);
    return performance.now() - started;
  });
  report('node and the CLI loaded, nothing run', loadOnly);
  report('ctx --help', Array.from({ length: RUNS }, () => timed(['--help'], env)));
  console.log(`${'first command, which makes the data directory'.padEnd(44)} ${seconds(timed(['projections', 'status'], env))}`);
  report('ctx projections status', Array.from({ length: RUNS }, () => timed(['projections', 'status'], env)));
  report('ctx search "parse config" --mode keyword', Array.from({ length: RUNS }, () => timed(['search', 'parse config', '--mode', 'keyword'], env)));
  const port = 17_000 + Math.floor(Math.random() * 10_000);
  const serving: number[] = [];
  for (let i = 0; i < Math.min(RUNS, 5); i++) serving.push(await serveUntilHealthy(env, port));
  report('ctx serve until /health answers', serving);
};
