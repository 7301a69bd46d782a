import { spawn } from 'node:child_process';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { sourceOfRepo } from '../../src/jobs/runIndexingJob.js';
import { loadConfig } from '../../src/config.js';
import { openLedger } from '../../src/main.js';
import type { DocumentView } from '../../src/domain/documentView.js';
import { tempDataDir } from '../support/ledger.js';
import { makeRepo } from './jobsSupport.js';

const WORKER = path.resolve(import.meta.dirname, 'jobsWorker.ts');

interface Run {
  jobId: string;
  lines: string[];
  /** How many runners had taken the job when the worker first reported it. */
  firstStatus?: { starts: number };
}

/** Runs the worker; `killWhen` decides from each status line whether to SIGKILL it. */
const runWorker = (args: string[], env: NodeJS.ProcessEnv, killWhen: (indexed: number, starts: number) => boolean) =>
  new Promise<Run>((resolve, reject) => {
    const run: Run = { jobId: env.JOB_ID ?? '', lines: [] };
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...env },
    });
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        run.lines.push(line);
        const [word, a, b, c] = line.split(' ');
        if (word === 'job') run.jobId = a!;
        if (word !== 'status') continue;
        const starts = Number(c);
        run.firstStatus ??= { starts };
        if (killWhen(Number(b), starts)) child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('exit', () => resolve(run));
  });

describe('an indexing job after kill -9', () => {
  it('resumes by itself on restart and indexes every file exactly once', async () => {
    const dataDir = tempDataDir('ctx-jobs-crash-');
    const repo = makeRepo(600, 'crash-repo-');
    const first = await runWorker([dataDir, repo], {}, (indexed) => indexed >= 150);
    expect(first.jobId).not.toBe('');
    expect(first.lines.some((l) => l.startsWith('status active'))).toBe(true);
    // Killed a second time mid-run, then left to finish.
    await runWorker([dataDir], { JOB_ID: first.jobId }, (indexed, starts) => starts >= 2 && indexed >= 300);
    const last = await runWorker([dataDir], { JOB_ID: first.jobId }, () => false);
    expect(last.lines.at(-1)).toMatch(/^status IndexingJobCompleted 600 3$/);
    // The restarted process had taken the job over before it reported anything.
    expect(last.firstStatus?.starts).toBe(3);

    const ledger = await openLedger(
      loadConfig({ env: { CTX_EMBEDDINGS__PROVIDER: 'none' }, overrides: { storage: { dataDir } } }),
      { logger: pino({ level: 'silent' }) },
    );
    try {
      await ledger.catchUp();
      const { items } = await ledger.readModels.find<DocumentView>('documents', {
        where: { source: sourceOfRepo(repo), project: 'crash' },
        limit: 10_000,
      });
      expect(items).toHaveLength(600);
      expect(new Set(items.map((d) => d.sourceId)).size).toBe(600);
      const search = ledger.operation('search');
      for (const i of [0, 149, 150, 301, 599]) {
        const found = (await search.run({ query: `uniqueword${i}x`, mode: 'keyword', limit: 10 }, {
          actor: { subject: 't', tenant: null, via: 'system' },
          correlationId: crypto.randomUUID(),
          project: 'crash',
        })) as { results: { source_id: string }[] };
        // Its file is found first, and once: indexed exactly once.
        const ofFile = (r: { source_id: string }) => /(^|\/)file(\d+)\.ts$/.exec(r.source_id)?.[2] === String(i);
        expect(found.results.filter(ofFile), `uniqueword${i}x`).toHaveLength(1);
        expect(ofFile(found.results[0]!), `uniqueword${i}x first`).toBe(true);
      }
    } finally {
      await ledger.close();
    }
  }, 240_000);
});
