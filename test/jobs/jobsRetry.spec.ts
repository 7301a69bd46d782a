import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, killServed, runBuilt, serveBuilt, type ServedCli } from '../support/builtCli.js';
import { EVERY_TOOLSET, tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { connectMcp, toolJson } from '../support/mcp.js';
import { until } from '../support/polling.js';

const ENV = { CTX_EMBEDDINGS__PROVIDER: 'none', ...EVERY_TOOLSET, ...tempRootsEnv() };

const ctx = async (args: string[]) => {
  const run = await runBuilt([...args, '--data-dir', dataDir], { env: ENV });
  return { ...run, json: () => JSON.parse(run.stdout) as Record<string, unknown> };
};

let dataDir: string;
let repo: string;

/** A job of `repo` recorded with no server to run it, then cancelled: what a retry starts again. */
const cancelledJob = async () => {
  const started = await ctx(['index', repo, '--json']);
  expect(started.code, started.stderr).toBe(0);
  const jobId = started.json().job_id as string;
  expect((await ctx(['jobs', 'cancel', jobId])).stdout).toMatch(/: cancelled\./);
  return jobId;
};

describe('jobs.retry: a failed or cancelled job runs again, on the CLI, REST and MCP', { timeout: 240_000 }, () => {
  let server: ServedCli;
  const cancelled: string[] = [];

  beforeAll(async () => {
    await ensureBuilt();
    dataDir = tempDataDir();
    repo = mkdtempSync(path.join(tmpdir(), 'ctx-retry-'));
    writeFileSync(path.join(repo, 'guide.md'), '# Guide\n\nA retried job indexes what its first run left.\n');
    writeFileSync(path.join(repo, 'main.py'), 'def main():\n    return 0\n');
    for (let i = 0; i < 3; i++) cancelled.push(await cancelledJob());
  }, 240_000);
  afterAll(killServed);

  it('starts a new job with the same request from the CLI, and refuses a job that has not ended badly', async () => {
    const retried = await ctx(['jobs', 'retry', cancelled[0]!, '--json']);
    expect(retried.code, retried.stderr).toBe(0);
    const answer = retried.json();
    expect(answer).toMatchObject({ status: 'pending', retry_of: cancelled[0], project_id: 'default' });
    const shown = await ctx(['jobs', 'show', answer.job_id as string, '--json']);
    expect(shown.json()).toMatchObject({ job_id: answer.job_id, status: 'pending' });

    const refused = await ctx(['jobs', 'retry', answer.job_id as string]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("Cannot retry job in status 'pending'. Only failed or cancelled jobs can be retried.");
    // The pending retry is cancelled in its turn, so that the server below runs only the jobs it retries.
    expect((await ctx(['jobs', 'cancel', answer.job_id as string])).code).toBe(0);
  });

  it('answers POST /api/v1/jobs/{job_id}/retry with 202 and the new job, which the server runs to the end', async () => {
    const key = (await ctx(['keys', 'create', '--scopes', 'index:read,index:write', '--json'])).json().api_key as string;
    server = await serveBuilt(['--data-dir', dataDir, '--bind', '127.0.0.1:0'], { env: ENV });
    const response = await fetch(`${server.url}/api/v1/jobs/${cancelled[1]}/retry`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: '{}',
    });
    const body = (await response.json()) as Record<string, unknown>;
    expect(response.status, JSON.stringify(body)).toBe(202);
    expect(body).toMatchObject({ retry_of: cancelled[1], project_id: 'default' });
    const mcp = await connectMcp(server.url);
    try {
      const status = await until(
        async () => toolJson(await mcp.callTool({ name: 'get_job_status', arguments: { job_id: body.job_id } })),
        (job) => job.status === 'completed',
        { timeoutMs: 60_000, what: 'the retried job to complete' },
      );
      expect(status).toMatchObject({ files_indexed: 2 });
    } finally {
      await mcp.close();
    }
  });

  it('retries through the MCP tool, and answers a job that completed with the job tools’ INVALID_STATUS', async () => {
    const mcp = await connectMcp(server.url);
    try {
      const retried = toolJson(await mcp.callTool({ name: 'jobs.retry', arguments: { job_id: cancelled[2] } }));
      expect(retried).toMatchObject({ retry_of: cancelled[2], project_id: 'default' });
      await until(
        async () => toolJson(await mcp.callTool({ name: 'get_job_status', arguments: { job_id: retried.job_id } })),
        (job) => job.status === 'completed',
        { timeoutMs: 60_000, what: 'the retried job to complete' },
      );
      const refused = await mcp.callTool({ name: 'jobs.retry', arguments: { job_id: retried.job_id } });
      expect(refused.isError).toBe(true);
      expect(toolJson(refused)).toMatchObject({
        error: { code: 'INVALID_STATUS', details: { current_status: 'completed', allowed_statuses: ['failed', 'cancelled'] } },
      });
      const unknown = await mcp.callTool({ name: 'jobs.retry', arguments: { job_id: '00000000-0000-4000-8000-000000000000' } });
      expect(toolJson(unknown)).toMatchObject({ error: { code: 'JOB_NOT_FOUND' } });
    } finally {
      await mcp.close();
    }
  });
});
