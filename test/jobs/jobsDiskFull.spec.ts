import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { streamId, type StoredEvent } from '../../src/domain/events.js';
import type { JobEvent } from '../../src/domain/jobs.js';
import { openLedger, startServer, type Ledger, type RunningServer } from '../../src/main.js';
import { MODULES } from '../../src/modules/index.js';
import { createJobsModule } from '../../src/modules/jobsModule.js';
import { tempRootsEnv } from '../support/ledger.js';
import { assertContract, makeRepo } from './jobsSupport.js';
import { connectMcpInProcess, toolJson } from '../support/mcp.js';
import { until } from '../support/polling.js';

const FILES = 300;

/** A small filesystem of its own for the data directory, so that the test can fill it; root only. */
const mountPoint = mkdtempSync(path.join(tmpdir(), 'ctx-full-disk-'));
const mounted = (() => {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=160m', 'tmpfs', mountPoint], { stdio: 'pipe' });
    return true;
  } catch {
    console.warn('Skipping the full-disk job test: mounting a tmpfs is not permitted here (it needs root)');
    return false;
  }
})();

/** Writes a file until the disk refuses more. */
const fillDisk = (file: string) => {
  const fd = openSync(file, 'w');
  try {
    for (const size of [1 << 20, 4096, 1]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
};

describe.skipIf(!mounted)('an indexing job whose disk fills up', () => {
  let ledger: Ledger;
  let server: RunningServer;
  let mcp: Client;
  const filler = path.join(mountPoint, 'filler');

  beforeAll(async () => {
    const config = loadConfig({
      env: {
        CTX_EMBEDDINGS__PROVIDER: 'none',
        CTX_JOBS__PROGRESS_EVERY_FILES: '10',
        CTX_JOBS__PROGRESS_INTERVAL_MS: '50',
        ...tempRootsEnv(),
      },
      overrides: { storage: { dataDir: path.join(mountPoint, 'data') }, server: { bind: '127.0.0.1:0' } },
    });
    ledger = await openLedger(config, {
      logger: pino({ level: 'silent' }),
      modules: MODULES.map((m) => (m.name === 'jobs' ? createJobsModule({ retryInitialMs: 100, retryMaxMs: 800 }) : m)),
    });
    server = await startServer(ledger);
    mcp = await connectMcpInProcess(ledger, undefined, 'full-disk');
  }, 120_000);

  afterAll(async () => {
    rmSync(filler, { force: true });
    try {
      await mcp?.close();
      await server?.close();
    } finally {
      execFileSync('umount', [mountPoint]);
    }
  });

  it('is blocked naming the full disk, refuses writes with 507, and completes with every file accounted for once space is back', async () => {
    const repo = makeRepo(FILES, 'full-disk-repo-');
    const started = toolJson(await mcp.callTool({ name: 'start_indexing_background', arguments: { repo_path: repo, project_id: 'full' } })) as {
      job_id: string;
    };
    assertContract('StartIndexingBackgroundResponse', started);
    const status = async () => {
      const body = toolJson(await mcp.callTool({ name: 'get_job_status', arguments: { job_id: started.job_id } }));
      assertContract('GetJobStatusResponse', body);
      return body as { status: string; progress_message: string; files_scanned: number; files_indexed: number };
    };

    await until(
      async () => (await ledger.store.readAll({ filter: { categories: ['doc'], project: 'full' } })).length,
      (n) => n >= 20,
      { timeoutMs: 60_000, what: 'the first documents' },
    );
    fillDisk(filler);

    const blocked = await until(status, (s) => s.status === 'blocked' || s.status === 'completed' || s.status === 'failed', { timeoutMs: 60_000, what: 'the job to be blocked' });
    expect(blocked.status).toBe('blocked');
    expect(blocked.progress_message).toMatch(/^Blocked: Insufficient storage: .*No space left on device; retrying with backoff$/);

    // A write that needs new pages is refused with the cause named, in the REST error format.
    const refused = await fetch(`${server.url}/api/v1/connectors`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'slack', name: 'Big', config: { workspace: 'w', channels: ['dev'], notes: randomBytes(150_000).toString('hex') } }),
    });
    const refusal = (await refused.json()) as { error: { code: string; detail: string; correlation_id: string; retryable: boolean } };
    expect(refused.status).toBe(507);
    expect(refusal.error).toMatchObject({ code: 'INSUFFICIENT_STORAGE', retryable: true });
    expect(refusal.error.correlation_id).toMatch(/\S/);
    expect(refusal.error.detail).toMatch(/^Insufficient storage: .*No space left on device$/);

    rmSync(filler);
    const done = await until(status, (s) => s.status === 'completed' || s.status === 'failed', { timeoutMs: 120_000, what: 'the job to finish' });
    expect(done).toMatchObject({ status: 'completed', files_scanned: FILES, files_indexed: FILES });

    const events = (await ledger.store.readStream(streamId('job', started.job_id))) as StoredEvent<JobEvent>[];
    const completed = events.at(-1)!;
    expect(completed.type).toBe('IndexingJobCompleted');
    expect(completed.data).toMatchObject({ filesScanned: FILES, filesIndexed: FILES, filesSkipped: 0, filesFailed: 0 });
    const types = events.map((e) => e.type);
    expect(types.indexOf('IndexingJobUnblocked')).toBeGreaterThan(types.indexOf('IndexingJobBlocked'));
    // Nothing written before the disk filled was lost: every file is in the ledger once.
    const ingested = (await ledger.store.readAll({ filter: { categories: ['doc'], project: 'full' } })).filter((e) => e.type === 'DocumentIngested');
    expect(new Set(ingested.map((e) => e.streamId)).size).toBe(FILES);
  }, 300_000);
});
