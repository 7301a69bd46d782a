import type { ChildProcess } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCtx, spawnCtx } from '../support/cli.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { startMeiliStandIn, type MeiliStandIn } from '../support/meiliStandIn.js';
import { createTestDatabase, testPostgresUrl, type TestDatabase } from '../support/postgres.js';
import { describeWith, POSTGRES_SERVER } from '../support/requirements.js';
import { makeRepo } from '../jobs/jobsSupport.js';
import { until } from '../support/polling.js';

const FILES = 400;
/** Tables that are not read models: the ledger itself, checkpoints, content, keys. */
const NOT_READ_MODELS = /^(ledger_|projection_|content_blobs$|data_keys$|embedding_cache$)|__shadow$/;

interface Replica {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

interface JobStatus {
  status: string;
  files_indexed: number;
}

describeWith(POSTGRES_SERVER, 'two ctx serve replicas on one PostgreSQL database', () => {
  let database: TestDatabase;
  let meili: MeiliStandIn;
  let env: NodeJS.ProcessEnv;
  const replicas: Replica[] = [];

  const serve = async (): Promise<Replica> => {
    const child = spawnCtx(['serve'], env);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /serving on (http:\/\/[\d.:]+)/.exec(output);
        if (match) resolve(match[1]!);
      };
      child.stdout?.on('data', read);
      child.stderr?.on('data', read);
      void exited.then((code) => reject(new Error(`ctx serve exited with ${code}: ${output}`)));
    });
    const replica = { child, url, exited };
    replicas.push(replica);
    return replica;
  };

  const tool = async <T>(replica: Replica, name: string, body: unknown): Promise<T> => {
    const response = await fetch(`${replica.url}/tools/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return JSON.parse(text) as T;
  };

  /** Job tools are served over MCP. */
  const mcpTool = async <T>(replica: Replica, name: string, args: Record<string, unknown>): Promise<T> => {
    const client = new Client({ name: 'replicas-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${replica.url}/mcp`)));
    try {
      const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { text: string }[] };
      expect(result.isError, result.content[0]!.text).toBeFalsy();
      return JSON.parse(result.content[0]!.text) as T;
    } finally {
      await client.close();
    }
  };

  const ingest = (replica: Replica, source: string, count: number) =>
    tool(replica, 'documents.ingest_batch', {
      source,
      documents: Array.from({ length: count }, (_, i) => ({
        source_id: `${source}-${i}`,
        title: `${source} ${i}`,
        body: `Document ${i} of ${source} replicas share projections ${source}word${i} here`,
      })),
    });

  const running = async (replica: Replica) => {
    const response = await fetch(`${replica.url}/api/v1/projections`);
    const { projections } = (await response.json()) as { projections: { name: string; state: string }[] };
    return projections.filter((p) => p.state === 'running').map((p) => p.name).sort();
  };

  const sql = async <R>(query: string): Promise<R[]> => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(query)).rows as R[];
    } finally {
      await client.end();
    }
  };

  /** Every row of every read model table, in a stable order. */
  const readModels = async () => {
    const tables = (await sql<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
    ))
      .map((t) => t.name)
      .filter((name) => !NOT_READ_MODELS.test(name));
    const dump: Record<string, string[]> = {};
    for (const table of tables) {
      const rows = await sql<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM ${pg.escapeIdentifier(table)} t`);
      dump[table] = rows.map((r) => r.row).sort();
    }
    return dump;
  };

  /** The runner that appended each IndexingJobStarted of `jobId`, in order. */
  const startedBy = async (jobId: string) =>
    (
      await sql<{ runner: string }>(
        `SELECT data->>'runnerId' AS runner FROM ledger_events
         WHERE event_type = 'IndexingJobStarted' AND data->>'jobId' = '${jobId}' ORDER BY transaction_id, global_position`,
      )
    ).map((r) => r.runner);

  beforeAll(async () => {
    database = await createTestDatabase(testPostgresUrl()!, 'ctx_replicas');
    meili = await startMeiliStandIn('up');
    env = {
      CTX_STORAGE__POSTGRES_URL: database.url,
      // Shared, so that both replicas seal secrets with the same key.
      CTX_STORAGE__DATA_DIR: tempDataDir('ctx-replicas-'),
      CTX_EMBEDDINGS__PROVIDER: 'none',
      // The test server has no pg_textsearch: keyword search goes to a Meilisearch stand-in.
      CTX_SEARCH__KEYWORD_INDEX: 'meilisearch',
      CTX_SEARCH__MEILISEARCH_URL: meili.url,
      CTX_SEARCH__MEILISEARCH_TIMEOUT_MS: '500',
      CTX_SERVER__BIND: '127.0.0.1:0',
      // The test polls both replicas all the time.
      CTX_SERVER__TOOLS_PER_MINUTE: '100000',
      CTX_SERVER__MCP_PER_MINUTE: '100000',
      CTX_MCP__TOOLSETS: 'all',
      CTX_LOG__LEVEL: 'info',
      ...tempRootsEnv(),
    };
  }, 60_000);

  afterAll(async () => {
    for (const replica of replicas) replica.child.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited));
    await meili?.close();
    await database?.drop();
  });

  it('share projections and jobs, survive one SIGKILLed mid-batch, and end with read models equal to a rebuild', async () => {
    const first = await serve();
    await ingest(first, 'alpha', 40);
    const startJob = async (replica: Replica) => {
      const { job_id: jobId } = await mcpTool<{ job_id: string }>(replica, 'start_indexing_background', {
        repo_path: makeRepo(FILES, 'replicas-repo-'),
        project_id: 'replicas',
      });
      return jobId;
    };
    const jobStatus = (replica: Replica, jobId: string) => mcpTool<JobStatus>(replica, 'get_job_status', { job_id: jobId });

    // A job the first replica runs, held up (blocked) while the keyword index is down.
    await meili.set('down');
    const blockedJob = await startJob(first);
    await until(() => jobStatus(first, blockedJob), (s) => s.status === 'blocked');

    // The second replica starts while the first runs every projection and the job: it takes none of them.
    const second = await serve();
    const projections = await running(first);
    expect(projections.length).toBeGreaterThan(0);
    expect(await running(second)).toEqual([]);
    const [firstRunner] = await startedBy(blockedJob);
    expect(await startedBy(blockedJob)).toEqual([firstRunner]);

    // Both answer queries and take writes; a write through the second is read back at once through it.
    await meili.set('up');
    const finished = (s: JobStatus) => s.status === 'completed' || s.status === 'failed';
    expect(await until(() => jobStatus(second, blockedJob), finished)).toMatchObject({ status: 'completed', files_indexed: FILES });
    expect(await startedBy(blockedJob)).toEqual([firstRunner]);
    const written = await ingest(second, 'beta', 40);
    expect(written).not.toHaveProperty('settling');
    const read = await tool<{ results: unknown[] }>(second, 'search', { query: 'betaword7', mode: 'keyword' });
    expect(read.results.length).toBeGreaterThan(0);

    // The first dies in the middle of its work: a job part-way, its batches being projected.
    const cutJob = await startJob(first);
    await until(() => jobStatus(first, cutJob), (s) => s.status === 'running' && s.files_indexed >= FILES / 4);
    const writing = ingest(first, 'gamma', 200).catch(() => undefined);
    first.child.kill('SIGKILL');
    await first.exited;
    await writing;

    // The second takes the projections and the job over, and keeps taking writes.
    await ingest(second, 'delta', 40);
    await until(() => running(second), (names) => names.join() === projections.join());
    expect(await until(() => jobStatus(second, cutJob), finished)).toMatchObject({ status: 'completed', files_indexed: FILES });
    // Run by the first until it died, then by the second alone.
    const runners = await startedBy(cutJob);
    expect(runners).toHaveLength(2);
    expect(runners[0]).toBe(firstRunner);
    expect(runners[1]).not.toBe(firstRunner);

    await ingest(second, 'epsilon', 10);
    const live = await readModels();
    const ingested = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_events WHERE event_type = 'DocumentIngested'`);
    expect(live['rm_documents']).toHaveLength(ingested[0]!.n);
    // The keyword index holds exactly the chunks of the ledger.
    const chunkIds = await sql<{ id: string }>(
      `SELECT DISTINCT c->>'id' AS id FROM ledger_events, json_array_elements(data->'chunks') c WHERE event_type = 'DocumentIngested'`,
    );
    expect([...meili.documents('ctx_chunks').keys()].sort()).toEqual(chunkIds.map((r) => r.id).sort());

    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    for (const name of projections.filter((p) => !p.startsWith('keyword'))) {
      const rebuilt = await runCtx(['projections', 'rebuild', name], env);
      expect(rebuilt.code, rebuilt.stderr).toBe(0);
    }
    expect(await readModels()).toEqual(live);
  }, 240_000);
});
