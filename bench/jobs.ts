import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { streamId } from '../src/domain/events.js';
import { openLedger, type Ledger } from '../src/main.js';
import type { OperationContext } from '../src/operations.js';
import { makeRepo } from '../test/jobs/jobsSupport.js';
import { run as runUnderLoad } from './jobsUnderLoad.js';
import { scratchDir } from './scratchDir.js';

/**
 * Indexing jobs on embedded PGlite: creation latency (queued, and started on a free slot), status
 * and list latency with 1,000 jobs, cancellation latency of a running job, resume latency after
 * SIGKILL, and indexing throughput on a real tree (the real embedding model when
 * CTX_EMBEDDINGS__MODEL_DIR is set, keyword only otherwise).
 */
const JOBS = 1_000;
const TREE = process.env.BENCH_TREE ?? path.resolve(import.meta.dirname, '../node_modules/zod');
const WORKER = path.resolve(import.meta.dirname, '../test/jobs/jobsWorker.ts');

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};
const ms = (value: number) => `${value.toFixed(1)} ms`;
const summary = (values: readonly number[]) =>
  `p50 ${ms(percentile(values, 50))}, p95 ${ms(percentile(values, 95))}, max ${ms(Math.max(...values))} (n=${values.length})`;
const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
  const startedAt = performance.now();
  const result = await work();
  return [result, performance.now() - startedAt];
};
const sleep = (msToWait: number) => new Promise((resolve) => setTimeout(resolve, msToWait));
const dataDir = () => scratchDir('ctx-bench-jobs-');

const context: OperationContext = {
  actor: { subject: 'bench', tenant: null, via: 'system' },
  correlationId: 'bench',
  project: 'default',
};

// The bench's repositories live in the temporary folder, and the tree it indexes wherever it is.
const INGEST_ROOTS = [tmpdir(), TREE].join(',');

const open = (env: NodeJS.ProcessEnv) =>
  openLedger(loadConfig({ env: { CTX_LOG__LEVEL: 'silent', CTX_INGEST__ROOTS: INGEST_ROOTS, ...env }, overrides: { storage: { dataDir: dataDir() } } }), {
    logger: pino({ level: 'silent' }),
  });

const runOp = async <T>(ledger: Ledger, name: string, input: unknown) =>
  (await ledger.operation(name).run(input as never, context)) as T;

const statusOf = (ledger: Ledger, jobId: string) =>
  runOp<{ status: string; files_indexed: number; files_scanned: number; started_at?: string; completed_at?: string }>(
    ledger,
    'get_job_status',
    { job_id: jobId },
  );

const latencies = async () => {
  const ledger = await open({ CTX_EMBEDDINGS__PROVIDER: 'none' });
  try {
    await ledger.projections.start();
    const root = dataDir();
    // Queued: the runner is not started yet, so every job waits.
    const queued: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const repo = path.join(root, `repo-${i}`);
      mkdirSync(repo);
      const [started, took] = await timed(() => runOp<{ job_id: string }>(ledger, 'start_indexing_background', { repo_path: repo, project_id: `p${i % 4}` }));
      queued.push(took);
      ids.push(started.job_id);
    }
    console.log(`job creation, queued (${JOBS} jobs): ${summary(queued)}`);
    await ledger.projections.waitFor(await ledger.store.headPosition(), { name: 'jobs', timeoutMs: 120_000 });

    const status: number[] = [];
    for (let i = 0; i < 500; i++) status.push((await timed(() => statusOf(ledger, ids[(i * 7919) % JOBS]!)))[1]);
    console.log(`get_job_status with ${JOBS} jobs: ${summary(status)}`);
    const list: number[] = [];
    for (let i = 0; i < 200; i++) {
      const input = i % 2 ? { project_id: 'p1', limit: 50, offset: (i * 13) % 200 } : { project_id: 'p2', status: 'pending' };
      list.push((await timed(() => runOp(ledger, 'list_background_jobs', input)))[1]);
    }
    console.log(`list_background_jobs with ${JOBS} jobs: ${summary(list)}`);

    // Cancel the queue, then measure creation that claims a free slot at once.
    for (const id of ids) await runOp(ledger, 'cancel_job', { job_id: id });
    await ledger.start();
    const running: number[] = [];
    for (let i = 0; i < 100; i++) {
      const repo = path.join(root, `run-${i}`);
      mkdirSync(repo);
      const [started, took] = await timed(() => runOp<{ job_id: string }>(ledger, 'start_indexing_background', { repo_path: repo }));
      running.push(took);
      while (!['completed', 'failed'].includes((await statusOf(ledger, started.job_id)).status)) await sleep(20);
    }
    console.log(`job creation, started on a free slot: ${summary(running)}`);
  } finally {
    await ledger.close();
  }
};

const cancellation = async () => {
  const ledger = await open({ CTX_EMBEDDINGS__PROVIDER: 'none' });
  try {
    await ledger.start();
    const samples: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { job_id } = await runOp<{ job_id: string }>(ledger, 'start_indexing_background', { repo_path: makeRepo(2000, 'bench-cancel-') });
      while ((await statusOf(ledger, job_id)).files_indexed < 50) await sleep(50);
      const askedAt = performance.now();
      await runOp(ledger, 'cancel_job', { job_id });
      for (;;) {
        const events = await ledger.store.readStream(streamId('job', job_id));
        if (events.at(-1)?.type === 'IndexingJobCancelled') break;
        await sleep(10);
      }
      samples.push(performance.now() - askedAt);
    }
    console.log(`cancellation of a running job (request to IndexingJobCancelled): ${summary(samples)}`);
  } finally {
    await ledger.close();
  }
};

/** Starts the worker, SIGKILLs it mid-job, restarts it, and times until the job is taken over again. */
const resume = async () => {
  const dir = dataDir();
  const repo = makeRepo(1500, 'bench-resume-');
  const spawnWorker = (args: string[], env: NodeJS.ProcessEnv, onLine: (words: string[], kill: () => void) => void) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', WORKER, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
      let buffer = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        const lines = buffer.split('\n');
        buffer = lines.pop()!;
        for (const line of lines) onLine(line.split(' '), () => child.kill('SIGKILL'));
      });
      child.on('error', reject);
      child.on('exit', () => resolve());
    });
  let jobId = '';
  await spawnWorker([dir, repo, 'bench'], {}, (words, kill) => {
    if (words[0] === 'job') jobId = words[1]!;
    if (words[0] === 'status' && Number(words[2]) >= 200) kill();
  });
  const restartedAt = performance.now();
  let resumedAfter = 0;
  let finishedAfter = 0;
  await spawnWorker([dir], { JOB_ID: jobId }, (words, kill) => {
    if (words[0] === 'status' && resumedAfter === 0 && Number(words[3]) >= 2) resumedAfter = performance.now() - restartedAt;
    if (words[0] === 'status' && words[1] !== 'active') finishedAfter = performance.now() - restartedAt;
    if (finishedAfter > 0) kill();
  });
  console.log(`resume after SIGKILL (restart to job taken over, incl. process start and opening PGlite): ${ms(resumedAfter)}; finished ${ms(finishedAfter)} after restart`);
};

const throughput = async () => {
  const withModel = Boolean(process.env.CTX_EMBEDDINGS__MODEL_DIR);
  const ledger = await open(withModel ? {} : { CTX_EMBEDDINGS__PROVIDER: 'none' });
  try {
    await ledger.start();
    const { job_id } = await runOp<{ job_id: string }>(ledger, 'start_indexing_background', { repo_path: TREE });
    const startedAt = performance.now();
    let status = await statusOf(ledger, job_id);
    while (!['completed', 'failed', 'cancelled'].includes(status.status)) {
      await sleep(200);
      status = await statusOf(ledger, job_id);
    }
    const seconds = (performance.now() - startedAt) / 1000;
    console.log(
      `throughput on ${TREE} (${withModel ? 'with the local embedding model' : 'keyword only: CTX_EMBEDDINGS__MODEL_DIR not set'}): ` +
        `${status.status}, ${status.files_indexed} files in ${seconds.toFixed(1)} s = ${(status.files_indexed / seconds).toFixed(1)} files/s`,
    );
  } finally {
    await ledger.close();
  }
};

export async function run(): Promise<void> {
  console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  // BENCH_JOBS=load runs only the serving-while-indexing part.
  if (process.env.BENCH_JOBS !== 'load') {
    await latencies();
    await cancellation();
    await resume();
    await throughput();
  }
  await runUnderLoad();
}
