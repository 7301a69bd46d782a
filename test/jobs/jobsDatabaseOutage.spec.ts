import type { Client } from '@modelcontextprotocol/client';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import type { DocumentView } from '../../src/domain/documentView.js';
import { documentsProjection } from '../../projections/search/documents.js';
import { loadConfig } from '../../src/config.js';
import { streamId, type StoredEvent } from '../../src/domain/events.js';
import type { JobEvent } from '../../src/domain/jobs.js';
import { sourceOfRepo } from '../../src/jobs/runIndexingJob.js';
import { openLedger, type Ledger } from '../../src/main.js';
import type { LedgerModule } from '../../src/module.js';
import { createJobsModule } from '../../src/modules/jobsModule.js';
import { ledgerModule } from '../../src/modules/ledgerModule.js';
import { tempRootsEnv } from '../support/ledger.js';
import { createTestDatabase, testPostgresUrl, type TestDatabase } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcpProxy.js';
import { assertContract, makeRepo } from './jobsSupport.js';
import { describeWith, POSTGRES_SERVER } from '../support/requirements.js';
import { connectMcpInProcess, toolJson } from '../support/mcp.js';
import { until } from '../support/polling.js';

const serverUrl = testPostgresUrl();
const FILES = 150;

/** The documents read model, which the job reads to find removed files (the search module's indexes need pgvector). */
const documentsModule: LedgerModule = {
  name: 'documents',
  setup: async ({ db }) => ({ projections: [await postgresDocumentProjection(db, documentsProjection)] }),
};

describeWith(POSTGRES_SERVER, 'an indexing job whose PostgreSQL server goes away', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let ledger: Ledger;
  let mcp: Client;

  beforeAll(async () => {
    database = await createTestDatabase(serverUrl!, 'ctx_outage');
    const direct = new URL(database.url);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const proxied = new URL(database.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const config = loadConfig({
      env: {
        CTX_STORAGE__POSTGRES_URL: proxied.toString(),
        CTX_EMBEDDINGS__PROVIDER: 'none',
        // The server has no pg_textsearch; the keyword index belongs to the search module, left out here.
        CTX_SEARCH__KEYWORD_INDEX: 'meilisearch',
        CTX_SEARCH__MEILISEARCH_URL: 'http://127.0.0.1:9',
        CTX_JOBS__PROGRESS_EVERY_FILES: '10',
        CTX_JOBS__PROGRESS_INTERVAL_MS: '50',
        ...tempRootsEnv(),
      },
    });
    ledger = await openLedger(config, {
      logger: pino({ level: 'silent' }),
      modules: [ledgerModule, documentsModule, createJobsModule({ retryInitialMs: 100, retryMaxMs: 800 })],
    });
    await ledger.start();
    mcp = await connectMcpInProcess(ledger, undefined, 'outage');
  }, 60_000);

  afterAll(async () => {
    await proxy?.restore();
    await mcp?.close();
    await ledger?.close();
    await proxy?.close();
    await database?.drop();
  });

  it('is blocked while the database is down, answers DATABASE_ERROR meanwhile, and completes with every file indexed once', async () => {
    const repo = makeRepo(FILES, 'outage-repo-');
    const started = toolJson(
      await mcp.callTool({ name: 'start_indexing_background', arguments: { repo_path: repo, project_id: 'outage' } }),
    ) as { job_id: string };
    assertContract('StartIndexingBackgroundResponse', started);
    const jobStream = streamId('job', started.job_id);

    // Mid-chunking: some of the repository's documents are in the ledger, not all of them.
    await until(
      async () => (await ledger.store.readAll({ filter: { categories: ['doc'], project: 'outage' } })).length,
      (n) => n >= 10,
      { timeoutMs: 30_000, what: 'the first documents' },
    );
    const cutAt = new Date().toISOString();
    await proxy.cut();

    const duringOutage = await mcp.callTool({ name: 'get_job_status', arguments: { job_id: started.job_id } });
    expect(duringOutage.isError).toBe(true);
    const error = toolJson(duringOutage);
    assertContract('ErrorResponse', error);
    const { code, message, details } = (error as { error: { code: string; message: string; details?: Record<string, unknown> } }).error;
    expect(code).toBe('DATABASE_ERROR');
    expect(message).toMatch(/^Database unavailable/);
    expect(details).toMatchObject({ error_type: 'DatabaseUnavailableError' });
    expect(details).toHaveProperty('pool_statistics');

    // The runner keeps retrying with backoff for a while; the job must neither fail nor be given up.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await proxy.restore();
    const restoredAt = new Date().toISOString();

    const done = await until(
      async () => toolJson(await mcp.callTool({ name: 'get_job_status', arguments: { job_id: started.job_id } })),
      (s) => s.status === 'completed' || s.status === 'failed',
      { timeoutMs: 60_000, what: 'the job to finish' },
    );
    assertContract('GetJobStatusResponse', done);
    expect(done).toMatchObject({ status: 'completed', files_scanned: FILES, files_indexed: FILES, progress_percentage: 100 });

    const events = await ledger.store.readStream(jobStream);
    const types = events.map((e) => e.type);
    expect(types).not.toContain('IndexingJobFailed');
    const blocked = events.find((e) => e.type === 'IndexingJobBlocked') as StoredEvent<JobEvent> | undefined;
    expect(blocked && 'reason' in blocked.data ? blocked.data.reason : undefined).toMatch(/^Database unavailable: .*; retrying with backoff$/);
    // Written once the database took writes again, stamped with the moment the outage was met.
    expect(blocked!.recordedAt >= restoredAt).toBe(true);
    expect(blocked!.metadata.occurredAt >= cutAt && blocked!.metadata.occurredAt < restoredAt).toBe(true);
    expect(types.indexOf('IndexingJobUnblocked')).toBeGreaterThan(types.indexOf('IndexingJobBlocked'));
    expect(types.at(-1)).toBe('IndexingJobCompleted');

    // Every file of the repository is in the ledger and the read model exactly once.
    const ingested = (await ledger.store.readAll({ filter: { categories: ['doc'], project: 'outage' } })).filter(
      (e) => e.type === 'DocumentIngested',
    );
    expect(ingested).toHaveLength(FILES);
    expect(new Set(ingested.map((e) => e.streamId)).size).toBe(FILES);
    await ledger.projections.waitFor(await ledger.store.headPosition(), { timeoutMs: 30_000 });
    const { items } = await ledger.readModels.find<DocumentView>('documents', {
      where: { project: 'outage', source: sourceOfRepo(repo) },
      limit: 1_000,
    });
    expect(items).toHaveLength(FILES);
  }, 120_000);

  it('completes when an administrator terminates its connections mid-job (SQLSTATE 57P01)', async () => {
    const repo = makeRepo(FILES, 'terminated-repo-');
    const started = toolJson(
      await mcp.callTool({ name: 'start_indexing_background', arguments: { repo_path: repo, project_id: 'terminated' } }),
    ) as { job_id: string };
    await until(
      async () => (await ledger.store.readAll({ filter: { categories: ['doc'], project: 'terminated' } })).length,
      (n) => n >= 10,
      { timeoutMs: 30_000, what: 'the first documents' },
    );
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ terminated: boolean }>(
        'SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [new URL(database.url).pathname.slice(1)],
      );
      expect(rows.some((r) => r.terminated)).toBe(true);
    } finally {
      await admin.end();
    }
    const done = await until(
      async () => toolJson(await mcp.callTool({ name: 'get_job_status', arguments: { job_id: started.job_id } })),
      (s) => s.status === 'completed' || s.status === 'failed',
      { timeoutMs: 60_000, what: 'the job to finish' },
    );
    expect(done).toMatchObject({ status: 'completed', files_indexed: FILES });
    const ingested = (await ledger.store.readAll({ filter: { categories: ['doc'], project: 'terminated' } })).filter(
      (e) => e.type === 'DocumentIngested',
    );
    expect(new Set(ingested.map((e) => e.streamId)).size).toBe(FILES);
    expect(ingested).toHaveLength(FILES);
  }, 120_000);
});
