import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, startApiServer, type ApiServer } from '../api/apiServer.js';
import { makeRepo } from './jobsSupport.js';

const DIMENSIONS = 8;

/** An embedding server on loopback in OpenAI's and Ollama's shapes, that can be switched to answer 503. */
const embeddingServer = async () => {
  /** Back up, it answers a batch of texts slowly: a probe of one text meanwhile sees it is back. */
  const state = { down: false, slowBatches: false };
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => void answer());
    const answer = async () => {
      const { input } = JSON.parse(body) as { input: string[] | string };
      if (state.down) {
        response.statusCode = 503;
        return void response.end('{"error":"loading"}');
      }
      const single = !Array.isArray(input) || input.length === 1;
      if (!single && state.slowBatches) await new Promise((resolve) => setTimeout(resolve, 3_000));
      const vectors = (Array.isArray(input) ? input : [input]).map((text) =>
        [...createHash('sha256').update(text).digest().subarray(0, DIMENSIONS)].map((b) => b / 255 + 0.01),
      );
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify(
          request.url === '/api/embed' ? { embeddings: vectors } : { data: vectors.map((embedding, index) => ({ index, embedding })) },
        ),
      );
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

const structured = (result: unknown) => (result as { structuredContent: Record<string, unknown> }).structuredContent;

describe.each(['openai', 'ollama'])('a job blocked on an HTTP embedder (%s style) whose dimension is not configured', (api) => {
  let server: ApiServer | undefined;
  let embedder: Awaited<ReturnType<typeof embeddingServer>> | undefined;
  let client: Client | undefined;
  afterAll(async () => {
    await client?.close();
    await server?.close();
    await embedder?.close();
  });

  it('runs again and completes once the server answers 200 again', async () => {
    embedder = await embeddingServer();
    server = await startApiServer({
      CTX_EMBEDDINGS__PROVIDER: 'http',
      CTX_EMBEDDINGS__URL: embedder.url,
      CTX_EMBEDDINGS__API: api,
      CTX_EMBEDDINGS__MODEL: 'Xenova/bge-small-en-v1.5',
    });
    client = new Client({ name: 'blocked-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${server.token(ALL_SCOPES)}` } },
      }),
    );
    const status = async (jobId: string) =>
      structured(await client!.callTool({ name: 'get_job_status', arguments: { job_id: jobId } })) as {
        status: string;
        error_message?: string;
      };
    const until = async (jobId: string, wanted: (s: string) => boolean) => {
      for (let s = await status(jobId); ; s = await status(jobId)) {
        if (wanted(s.status)) return s;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };

    // The semantic index loads once the server has told the model's dimension.
    while (!(await server.ledger.projections.status()).some((p) => p.name === 'semantic'))
      await new Promise((resolve) => setTimeout(resolve, 200));
    embedder.state.down = true;
    embedder.state.slowBatches = true;
    const started = structured(
      await client.callTool({ name: 'start_indexing_background', arguments: { repo_path: makeRepo(20, `blocked-${api}-`) } }),
    );
    const jobId = started.job_id as string;
    expect((await until(jobId, (s) => s !== 'pending' && s !== 'running')).status).toBe('blocked');
    embedder.state.down = false;
    const done = await until(jobId, (s) => ['completed', 'failed', 'cancelled'].includes(s));
    expect(done.error_message).toBeUndefined();
    expect(done.status).toBe('completed');
  }, 180_000);
});
