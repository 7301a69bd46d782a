import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { openTestLedger, tempDataDir } from '../support/ledger.js';
import { assertContract, makeRepo, type ContractName } from './jobsSupport.js';

type Json = Record<string, unknown>;

describe('background indexing jobs over MCP', () => {
  let server: RunningServer;
  let client: Client;

  const call = async (name: string, args: Json) => {
    const result = (await client.callTool({ name, arguments: args })) as {
      isError?: boolean;
      content: { type: string; text: string }[];
    };
    return { isError: Boolean(result.isError), body: JSON.parse(result.content[0]!.text) as Json };
  };
  const ok = async (name: string, args: Json, contract: ContractName) => {
    const { isError, body } = await call(name, args);
    expect(isError, JSON.stringify(body)).toBe(false);
    assertContract(contract, body);
    return body;
  };
  const fails = async (name: string, args: Json, code: string) => {
    const { isError, body } = await call(name, args);
    expect(isError).toBe(true);
    assertContract('ErrorResponse', body);
    expect((body.error as Json).code).toBe(code);
    return body.error as { code: string; message: string; details?: Json };
  };
  const status = (jobId: string) => ok('get_job_status', { job_id: jobId }, 'GetJobStatusResponse');
  const until = async (jobId: string, wanted: (s: Json) => boolean, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = await status(jobId);
      if (wanted(current)) return current;
      if (Date.now() > deadline) throw new Error(`job ${jobId} stuck at ${JSON.stringify(current)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const finished = (s: Json) => ['completed', 'failed', 'cancelled'].includes(s.status as string);

  beforeAll(async () => {
    server = await startServer(await openTestLedger({ CTX_JOBS__PROGRESS_EVERY_FILES: '20' }));
    client = new Client({ name: 'jobs-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  }, 60_000);
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('indexes a repository in the background and reports every phase up to completed', async () => {
    const repo = makeRepo(30);
    const started = await ok('start_indexing_background', { repo_path: repo, project_id: 'alpha' }, 'StartIndexingBackgroundResponse');
    expect(started).toMatchObject({ status: 'running', project_id: 'alpha' });
    expect(started.database_name).toMatch(/^cb_proj_alpha_[a-f0-9]{8}$/);
    const done = await until(started.job_id as string, finished);
    expect(done).toMatchObject({
      status: 'completed',
      progress_percentage: 100,
      files_scanned: 30,
      files_indexed: 30,
      project_id: 'alpha',
    });
    expect(done.chunks_created).toBeGreaterThanOrEqual(30);
    expect(done).not.toHaveProperty('error_message');

    const list = await ok('list_background_jobs', { project_id: 'alpha' }, 'ListBackgroundJobsResponse');
    expect(list.total_count).toBe(1);
    expect((list.jobs as Json[])[0]).toMatchObject({ job_id: started.job_id, repo_path: repo, repo_name: path.basename(repo) });
    const other = await ok('list_background_jobs', { project_id: 'beta' }, 'ListBackgroundJobsResponse');
    expect(other.total_count).toBe(0);
  });

  it('skips unchanged files and removes deleted ones on the next run', async () => {
    const repo = makeRepo(12);
    const first = await ok('start_indexing_background', { repo_path: repo, project_id: 'incr' }, 'StartIndexingBackgroundResponse');
    await until(first.job_id as string, finished);
    writeFileSync(path.join(repo, 'pkg0', 'file0.ts'), 'export const changed = 1;\n');
    const { rmSync } = await import('node:fs');
    rmSync(path.join(repo, 'pkg1', 'file1.ts'));
    const second = await ok('start_indexing_background', { repo_path: repo, project_id: 'incr' }, 'StartIndexingBackgroundResponse');
    const done = await until(second.job_id as string, finished);
    expect(done).toMatchObject({ status: 'completed', files_scanned: 11, files_indexed: 11 });
  });

  it('runs three jobs at once and queues the fourth, then cancels a queued and a running job', async () => {
    const repos = [0, 1, 2, 3].map(() => makeRepo(400));
    const started: Json[] = [];
    for (const repo of repos) {
      started.push(await ok('start_indexing_background', { repo_path: repo, project_id: 'four' }, 'StartIndexingBackgroundResponse'));
    }
    expect(started.map((s) => s.status)).toEqual(['running', 'running', 'running', 'pending']);
    expect(started[3]!.message).toMatch(/position 1 \(3 jobs currently running\)/);

    const queued = await ok('cancel_job', { job_id: started[3]!.job_id }, 'CancelJobResponse');
    expect(queued.status).toBe('cancelled');

    await until(started[0]!.job_id as string, (s) => (s.files_indexed as number) > 0);
    const askedAt = Date.now();
    const running = await ok('cancel_job', { job_id: started[0]!.job_id }, 'CancelJobResponse');
    expect(running.status).toBe('cancelling');
    const stopped = await until(started[0]!.job_id as string, finished, 10_000);
    expect(Date.now() - askedAt).toBeLessThan(5_000);
    expect(stopped.status).toBe('cancelled');
    expect(stopped.files_indexed as number).toBeLessThan(400);

    await fails('cancel_job', { job_id: started[3]!.job_id }, 'INVALID_STATUS');
    for (const job of started.slice(1, 3)) await ok('cancel_job', { job_id: job.job_id }, 'CancelJobResponse');
    for (const job of started) await until(job.job_id as string, finished, 10_000);
  }, 120_000);

  it('refuses a second job for a repository already being indexed in the project', async () => {
    const repo = makeRepo(300);
    const first = await ok('start_indexing_background', { repo_path: repo, project_id: 'dup' }, 'StartIndexingBackgroundResponse');
    const error = await fails('start_indexing_background', { repo_path: repo, project_id: 'dup' }, 'DUPLICATE_JOB');
    expect(error.details).toMatchObject({ job_id: first.job_id });
    const other = await ok('start_indexing_background', { repo_path: repo, project_id: 'dup-other' }, 'StartIndexingBackgroundResponse');
    // Both cancelled, so that no 300-file job runs on beside the tests after this one.
    for (const job of [first, other]) await ok('cancel_job', { job_id: job.job_id }, 'CancelJobResponse');
  });

  it("answers bad input with the job tools' error objects and changes nothing", async () => {
    const before = await ok('list_background_jobs', { project_id: 'bad' }, 'ListBackgroundJobsResponse');
    const relative = await fails('start_indexing_background', { repo_path: 'relative/path', project_id: 'bad' }, 'VALIDATION_ERROR');
    expect(relative.details).toMatchObject({ field: 'repo_path', value: 'relative/path' });
    expect(relative.details?.suggestion).toMatch(/absolute/);
    await fails('start_indexing_background', { repo_path: '/does/not/exist', project_id: 'bad' }, 'VALIDATION_ERROR');
    const file = path.join(tempDataDir(), 'a-file.txt');
    writeFileSync(file, 'x');
    await fails('start_indexing_background', { repo_path: file, project_id: 'bad' }, 'VALIDATION_ERROR');
    await fails('start_indexing_background', { project_id: 'bad' }, 'VALIDATION_ERROR');
    await fails('get_job_status', { job_id: 'not-a-uuid' }, 'VALIDATION_ERROR');
    const unknown = await fails('get_job_status', { job_id: crypto.randomUUID() }, 'JOB_NOT_FOUND');
    expect(unknown.message).toMatch(/^Job not found: /);
    await fails('cancel_job', { job_id: crypto.randomUUID() }, 'JOB_NOT_FOUND');
    await fails('list_background_jobs', { status: 'sleeping' }, 'VALIDATION_ERROR');
    const after = await ok('list_background_jobs', { project_id: 'bad' }, 'ListBackgroundJobsResponse');
    expect(after.total_count).toBe(before.total_count);
  });

  it('refuses to cancel a finished job with INVALID_STATUS', async () => {
    const repo = makeRepo(3);
    const started = await ok('start_indexing_background', { repo_path: repo, project_id: 'done' }, 'StartIndexingBackgroundResponse');
    await until(started.job_id as string, finished);
    const error = await fails('cancel_job', { job_id: started.job_id }, 'INVALID_STATUS');
    expect(error.message).toBe("Cannot cancel job in status 'completed'. Only pending/running jobs can be cancelled.");
    expect(error.details).toMatchObject({ current_status: 'completed' });
  });
});
