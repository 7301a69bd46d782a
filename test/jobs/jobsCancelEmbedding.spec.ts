import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMBEDDING_PIECE } from '../../projections/search/semanticIndex.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from '../api/apiServer.js';
import { tempDataDir } from '../support/ledger.js';
import { SLOW_EMBEDDER_DIMENSIONS, startSlowEmbedder } from '../support/slowEmbedder.js';

const FILES = 240;

/** A repository of small files no other test has (none of its chunks is in the embedding cache), each with a word of its own. */
const freshRepo = (): string => {
  const root = tempDataDir('ctx-cancel-embed-');
  const run = randomUUID();
  for (let i = 0; i < FILES; i++) {
    mkdirSync(path.join(root, `pkg${i % 10}`), { recursive: true });
    writeFileSync(path.join(root, `pkg${i % 10}`, `file${i}.ts`), `// run ${run}\nexport const marker${i} = 'deferword${i}q';\n`);
  }
  return root;
};

describe('cancelling an indexing job stops the embedding of its chunks', () => {
  let embedder: Awaited<ReturnType<typeof startSlowEmbedder>>;
  /** The chunk passages sent to the embedder so far (search queries left out). */
  const passages = () => embedder.received().filter((text) => text.includes('export const'));
  let server: ApiServer;
  let client: Client;
  /** The operator, for the projections (which act on every tenant). */
  let operator: Client;
  const repo = freshRepo();
  beforeAll(async () => {
    embedder = await startSlowEmbedder(300);
    server = await startApiServer({
      CTX_EMBEDDINGS__PROVIDER: 'http',
      CTX_EMBEDDINGS__URL: embedder.url,
      CTX_EMBEDDINGS__MODEL: 'stand-in-embedder',
      CTX_EMBEDDINGS__DIMENSIONS: String(SLOW_EMBEDDER_DIMENSIONS),
      CTX_EMBEDDINGS__BATCH_SIZE: '8',
      CTX_JOBS__PROGRESS_INTERVAL_MS: '100',
    });
    const connect = async (token: string) => {
      const connected = new Client({ name: 'cancel-embedding-test', version: '1.0.0' });
      await connected.connect(
        new StreamableHTTPClientTransport(new URL(`${server.server.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return connected;
    };
    client = await connect(server.token(ALL_SCOPES));
    operator = await connect(server.token(['admin'], 'default', 'operator'));
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await operator?.close();
    await server?.close();
    await embedder?.close();
  });

  const call = async (name: string, args: Record<string, unknown>, caller = client) => {
    const result = (await caller.callTool({ name, arguments: args })) as {
      isError?: boolean;
      content: unknown;
      structuredContent: Record<string, unknown>;
    };
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    return result.structuredContent;
  };
  const status = async (job_id: string) => (await call('get_job_status', { job_id })) as { status: string };
  const until = async (done: () => Promise<boolean> | boolean) => {
    while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 50));
  };
  /** The semantic index has applied every event written so far. */
  const semanticCaughtUp = async () => {
    const { projections } = (await call('projections.status', {}, operator)) as {
      projections: { name: string; lag_events: number; last_error: unknown }[];
    };
    const semantic = projections.find((p) => p.name === 'semantic')!;
    expect(semantic.last_error).toBeNull();
    return semantic.lag_events === 0;
  };
  const counts = async () => {
    const [row] = await server.ledger.db.query<{ semantic: number; deferred: number; keyword: number; chunks: number }>(
      `SELECT (SELECT count(*)::int FROM search_semantic) AS semantic,
              (SELECT count(*)::int FROM search_semantic_deferred) AS deferred,
              (SELECT count(*)::int FROM search_keyword) AS keyword,
              (SELECT count(DISTINCT chunk_id)::int FROM search_keyword) AS chunks`,
    );
    return row!;
  };
  const semanticRows = () =>
    server.ledger.db.query<{ chunk_id: string; value: string }>(`SELECT chunk_id, value::text AS value FROM search_semantic ORDER BY chunk_id`);

  it('sends none of the job’s chunks to the embedder once it is cancelled; keyword search keeps them, and every mode answers', async () => {
    // Held until the cancel, so that most chunks are still unembedded then, however slowly the
    // machine chunks the files (the semantic index embeds them as they are stored).
    embedder.hold();
    const { job_id } = (await call('start_indexing_background', { repo_path: repo })) as { job_id: string };
    // Every file is chunked and stored, and the job waits for their embeddings.
    await until(async () => ((await call('get_job_status', { job_id })) as { progress_message: string }).progress_message.startsWith('Generating embeddings'));
    const cancel = (await call('cancel_job', { job_id })) as { status: string };
    embedder.release();
    expect(['cancelled', 'cancelling']).toContain(cancel.status);
    await until(async () => (await status(job_id)).status === 'cancelled');
    const sentAtCancel = passages().length;

    await until(semanticCaughtUp);
    // Only the piece of work already under way when the cancel was seen is finished.
    const sentAfterCancel = passages().length - sentAtCancel;
    expect(sentAfterCancel).toBeLessThanOrEqual(EMBEDDING_PIECE);
    const stored = await counts();
    expect(passages().length).toBeLessThan(stored.keyword);
    // What was embedded stays; the rest waits unembedded, and nothing is missing.
    expect(stored.deferred).toBeGreaterThan(0);
    expect(stored.semantic + stored.deferred).toBe(stored.keyword);
    expect(stored.semantic).toBe(new Set(passages()).size);

    // Keyword search finds a document whose chunk was never embedded.
    const [waiting] = await server.ledger.db.query<{ source_id: string }>(
      'SELECT source_id FROM search_semantic_deferred ORDER BY source_id LIMIT 1',
    );
    const word = `deferword${/file(\d+)\.ts$/.exec(waiting!.source_id)![1]}q`;
    const keyword = (await call('context.search', { query: word, mode: 'keyword' })) as { results: { source_id: string }[] };
    expect(keyword.results.map((r) => r.source_id)).toContain(waiting!.source_id);
    // Hybrid and semantic search answer; none says the semantic index is still embedding, each says
    // how many chunks it holds unembedded and what embeds them.
    for (const mode of ['hybrid', 'semantic']) {
      const found = (await call('context.search', { query: word, mode })) as { results: unknown[]; notice?: string };
      expect(Array.isArray(found.results)).toBe(true);
      expect(found.notice ?? '').not.toMatch(/still embedding/);
      expect(found.notice).toBe(
        `${stored.deferred.toLocaleString('en-US')} chunks of cancelled indexing jobs are not embedded: ranking by meaning misses them until their path is indexed again`,
      );
    }
  }, 120_000);

  it('embeds the waiting chunks when the repository is indexed again: each chunk once', async () => {
    const { job_id } = (await call('start_indexing_background', { repo_path: repo })) as { job_id: string };
    await until(async () => {
      const s = await status(job_id);
      expect(['pending', 'running', 'completed']).toContain(s.status);
      return s.status === 'completed';
    });
    const stored = await counts();
    expect(stored).toEqual({ semantic: stored.keyword, deferred: 0, keyword: stored.chunks, chunks: FILES });
    // Every chunk was sent to the embedder exactly once, over both jobs.
    expect(passages().length).toBe(FILES);
    expect(new Set(passages()).size).toBe(FILES);
    const found = (await call('context.search', { query: 'deferword1q', mode: 'hybrid' })) as { notice?: string };
    expect(found.notice).toBeUndefined();
  }, 120_000);

  it('comes out the same from a rebuild of the semantic index', async () => {
    const before = await semanticRows();
    await call('projections.rebuild', { name: 'semantic' }, operator);
    expect(await semanticRows()).toEqual(before);
    expect(await counts()).toMatchObject({ semantic: FILES, deferred: 0 });
    // The rebuild took every vector from the embedding cache.
    expect(passages().length).toBe(FILES);
  }, 120_000);
});
