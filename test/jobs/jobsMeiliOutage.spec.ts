import type { Client } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openLedger, startServer, type Ledger, type RunningServer } from '../../src/main.js';
import { MODULES } from '../../src/modules/index.js';
import { createJobsModule } from '../../src/modules/jobsModule.js';
import type { ProjectionStatus } from '../../src/engine/projectionRunner.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { startMeiliStandIn, type MeiliStandIn, type MeiliStandInMode } from '../support/meiliStandIn.js';
import { makeRepo } from './jobsSupport.js';
import { connectMcpInProcess, toolJson } from '../support/mcp.js';
import { until } from '../support/polling.js';

const FILES = 20;

describe('an indexing job whose Meilisearch goes away', { timeout: 120_000 }, () => {
  let meili: MeiliStandIn;
  let ledger: Ledger;
  let server: RunningServer;
  let mcp: Client;

  beforeAll(async () => {
    meili = await startMeiliStandIn('up');
    const config = loadConfig({
      env: {
        CTX_STORAGE__DATA_DIR: tempDataDir(),
        CTX_EMBEDDINGS__PROVIDER: 'none',
        CTX_SEARCH__KEYWORD_INDEX: 'meilisearch',
        CTX_SEARCH__MEILISEARCH_URL: meili.url,
        CTX_SEARCH__MEILISEARCH_TIMEOUT_MS: '500',
        CTX_SERVER__BIND: '127.0.0.1:0',
        ...tempRootsEnv(),
      },
    });
    ledger = await openLedger(config, {
      logger: pino({ level: 'silent' }),
      modules: MODULES.map((m) => (m.name === 'jobs' ? createJobsModule({ retryInitialMs: 100, retryMaxMs: 400 }) : m)),
    });
    server = await startServer(ledger);
    mcp = await connectMcpInProcess(ledger, undefined, 'meili-outage');
  }, 120_000);

  // A case that fails leaves Meilisearch as it was: the next one starts with it up.
  afterEach(() => meili.set('up'));

  afterAll(async () => {
    await mcp?.close();
    await server?.close();
    await meili?.close();
  });

  const jobStatus = async (jobId: string) =>
    toolJson(await mcp.callTool({ name: 'get_job_status', arguments: { job_id: jobId } }));
  const health = async () =>
    (await (await fetch(`${server.url}/api/v1/health`)).json()) as {
      status: string;
      services: Record<string, string>;
      problems?: { service: string; projection: string; error: string }[];
    };
  const keywordProjection = async () =>
    (await ledger.projections.status()).find((p) => p.name === 'keyword') as ProjectionStatus;

  it.each<[MeiliStandInMode, string, RegExp]>([
    ['down', 'is unavailable', /fetch failed|ECONNREFUSED/],
    ['failing', 'is unavailable', /503|Service Unavailable/],
    ['hanging', 'is unavailable', /timed out|timeout/i],
    ['refusing', 'refused the configured API key', /invalid_api_key/],
  ])('is blocked with the reason while Meilisearch is %s, and completes with every chunk indexed once when it returns', async (mode, what, why) => {
    const project = `meili-${mode}`;
    await meili.set(mode);
    const repo = makeRepo(FILES, `meili-${mode}-`);
    const { job_id: jobId } = toolJson(
      await mcp.callTool({ name: 'start_indexing_background', arguments: { repo_path: repo, project_id: project } }),
    ) as { job_id: string };

    // The keyword projection's state goes with the job's into the message should a wait run out.
    const observe = async () => ({ job: await jobStatus(jobId), keyword: await keywordProjection() });
    const { job: blocked } = await until(observe, ({ job }) => job.status === 'blocked', {
      timeoutMs: 50_000,
      intervalMs: 200,
      what: `the job to be blocked while Meilisearch is ${mode}`,
    });
    expect(blocked.progress_message).toMatch(new RegExp(`^Blocked: Meilisearch ${what}: `));
    expect(blocked.progress_message).toMatch(why);
    // The keyword projection says why it is behind, and keeps retrying.
    const failing = await keywordProjection();
    expect(failing.lastError?.message).toMatch(new RegExp(`^Meilisearch ${what}: `));
    expect(failing.lagEvents).toBeGreaterThan(0);
    // Health names the degraded service and the read model behind it while the outage lasts.
    const degraded = await health();
    expect(degraded).toMatchObject({ status: 'degraded', services: { search: 'degraded', index: 'healthy' } });
    expect(degraded.problems).toEqual([
      expect.objectContaining({ service: 'search', projection: 'keyword', error: failing.lastError?.message }),
    ]);

    await meili.set('up');
    const { job: done } = await until(observe, ({ job }) => job.status === 'completed' || job.status === 'failed', {
      timeoutMs: 50_000,
      intervalMs: 200,
      what: 'the job to end once Meilisearch is back',
    });
    expect(done).toMatchObject({ status: 'completed', files_indexed: FILES });
    const events = await ledger.store.readAll({ filter: { categories: ['doc'], project } });
    const chunkIds = events.flatMap((e) =>
      e.type === 'DocumentIngested' ? (e.data as { chunks: { id: string }[] }).chunks.map((c) => c.id) : [],
    );
    expect(events.filter((e) => e.type === 'DocumentIngested')).toHaveLength(FILES);
    const indexed = [...meili.documents('ctx_chunks').values()].filter((d) => d.project === project);
    expect(indexed.map((d) => d.id).sort()).toEqual([...chunkIds].sort());
    expect((await keywordProjection()).lastError).toBeNull();
    const healthy = await health();
    expect(healthy).toMatchObject({ status: 'healthy', services: { search: 'healthy', index: 'healthy' } });
    expect(healthy.problems).toBeUndefined();
  });
});
