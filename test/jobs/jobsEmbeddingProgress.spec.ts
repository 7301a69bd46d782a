import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, startApiServer, type ApiServer } from '../api/apiServer.js';
import { tempDataDir } from '../support/ledger.js';
import { SLOW_EMBEDDER_DIMENSIONS, startSlowEmbedder } from '../support/slowEmbedder.js';

/** A repository of `count` small files no other test has: none of its chunks is in the embedding cache. */
const freshRepo = (count: number, prefix: string): string => {
  const root = tempDataDir(prefix);
  const run = randomUUID();
  for (let i = 0; i < count; i++) {
    mkdirSync(path.join(root, `pkg${i % 10}`), { recursive: true });
    writeFileSync(path.join(root, `pkg${i % 10}`, `file${i}.ts`), `// run ${run}\nexport const marker${i} = 'word${i}';\n`);
  }
  return root;
};

interface Status {
  status: string;
  progress_percentage: number;
  progress_message: string;
  estimated_time_remaining_seconds?: number;
}

describe('an indexing job while its chunks are embedded', () => {
  let embedder: Awaited<ReturnType<typeof startSlowEmbedder>>;
  let server: ApiServer;
  let client: Client;
  beforeAll(async () => {
    embedder = await startSlowEmbedder(400);
    server = await startApiServer({
      CTX_EMBEDDINGS__PROVIDER: 'http',
      CTX_EMBEDDINGS__URL: embedder.url,
      CTX_EMBEDDINGS__MODEL: 'stand-in-embedder',
      CTX_EMBEDDINGS__DIMENSIONS: String(SLOW_EMBEDDER_DIMENSIONS),
      CTX_EMBEDDINGS__BATCH_SIZE: '8',
      CTX_JOBS__PROGRESS_INTERVAL_MS: '100',
    });
    client = new Client({ name: 'embedding-progress-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${server.token(ALL_SCOPES)}` } },
      }),
    );
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await server?.close();
    await embedder?.close();
  });

  it('moves its percentage chunk by chunk, with a time left measured from the embedding rate', async () => {
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as { structuredContent: Record<string, unknown> };
    // Held until the files are chunked, so that every chunk is embedded in the embedding phase
    // however fast the machine chunks them.
    embedder.hold();
    const { job_id } = (await call('start_indexing_background', { repo_path: freshRepo(240, 'ctx-embed-progress-') }))
      .structuredContent as { job_id: string };

    const embedding: Status[] = [];
    for (let s: Status | null = null; s?.status !== 'completed'; await new Promise((r) => setTimeout(r, 50))) {
      s = (await call('get_job_status', { job_id })).structuredContent as unknown as Status;
      expect(['pending', 'running']).toContain(s.status === 'completed' ? 'running' : s.status);
      if (s.status === 'running' && s.progress_message.startsWith('Generating embeddings')) {
        embedding.push(s);
        embedder.release();
      }
    }

    const percentages = embedding.map((s) => s.progress_percentage);
    const distinct = [...new Set(percentages)];
    expect(distinct.length, `seen while embedding: ${embedding.map((s) => `${s.progress_percentage} ${s.progress_message} ${s.estimated_time_remaining_seconds}`).join("; ")}`).toBeGreaterThanOrEqual(4);
    // never backwards
    expect(percentages).toEqual([...percentages].sort((a, b) => a - b));
    const etas = embedding.flatMap((s) => (s.estimated_time_remaining_seconds === undefined ? [] : [s.estimated_time_remaining_seconds]));
    expect(etas.length).toBeGreaterThanOrEqual(2);
    // Measured from the embedding rate, which a loaded machine moves: present and sane, not monotonic.
    for (const eta of etas) expect(Number.isFinite(eta) && eta >= 0, String(eta)).toBe(true);
  }, 120_000);

  it('ends as cancelled when cancelled while its chunks are embedded, and stays cancelled', async () => {
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as { structuredContent: Record<string, unknown> };
    const status = async (job_id: string) => (await call('get_job_status', { job_id })).structuredContent as unknown as Status;
    const { job_id } = (await call('start_indexing_background', { repo_path: freshRepo(240, 'ctx-embed-cancel-') }))
      .structuredContent as { job_id: string };
    for (let s = await status(job_id); !s.progress_message.startsWith('Generating embeddings'); s = await status(job_id)) {
      expect(s.status).not.toBe('completed');
      await new Promise((r) => setTimeout(r, 50));
    }
    const cancel = (await call('cancel_job', { job_id })).structuredContent as { status: string };
    expect(['cancelled', 'cancelling']).toContain(cancel.status);
    const deadline = Date.now() + 30_000;
    let s = await status(job_id);
    while (s.status !== 'cancelled' && Date.now() < deadline) {
      expect(['running', 'blocked']).toContain(s.status);
      await new Promise((r) => setTimeout(r, 100));
      s = await status(job_id);
    }
    expect(s.status).toBe('cancelled');
    // The semantic index finishing the job's chunks afterwards never turns the cancel into another outcome.
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await status(job_id)).status).toBe('cancelled');
  }, 120_000);
});
