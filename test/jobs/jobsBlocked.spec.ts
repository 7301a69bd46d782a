import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { streamId } from '../../src/domain/events.js';
import type { Ledger } from '../../src/main.js';
import { openTestLedger } from '../support/ledger.js';
import { assertContract, makeRepo } from './jobsSupport.js';

const DIMENSIONS = 8;

/** A tiny OpenAI-compatible embedding server standing in for Ollama: vectors from a hash of each text. */
const embeddingServer = () =>
  createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const { input } = JSON.parse(body) as { input: string[] };
      const data = input.map((text, index) => ({
        index,
        embedding: [...createHash('sha256').update(text).digest().subarray(0, DIMENSIONS)].map((b) => b / 255 + 0.01),
      }));
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ data }));
    });
  });

const listen = (server: Server, port = 0) =>
  new Promise<number>((resolve) => server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
const stop = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('an indexing job whose embedding service goes away', () => {
  let ledger: Ledger | undefined;
  afterAll(async () => ledger?.close());

  it('is blocked while the embedder is down and completes once it is back', async () => {
    const first = embeddingServer();
    const port = await listen(first);
    await stop(first);
    ledger = await openTestLedger({
      CTX_EMBEDDINGS__PROVIDER: 'http',
      CTX_EMBEDDINGS__URL: `http://127.0.0.1:${port}`,
      CTX_EMBEDDINGS__MODEL: 'hash-embedder',
      CTX_EMBEDDINGS__DIMENSIONS: String(DIMENSIONS),
    });
    await ledger.start();
    const context = { actor: { subject: 't', tenant: null, via: 'system' as const }, correlationId: crypto.randomUUID(), project: 'default' };
    const status = async (jobId: string) => {
      const body = await ledger!.operation('get_job_status').run({ job_id: jobId }, context);
      assertContract('GetJobStatusResponse', body);
      return body as { status: string; progress_message: string; progress_percentage: number };
    };
    const waitFor = async (jobId: string, wanted: string, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      for (let s = await status(jobId); s.status !== wanted; s = await status(jobId)) {
        if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(s)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return status(jobId);
    };

    const started = (await ledger.operation('start_indexing_background').run(
      { repo_path: makeRepo(20), project_id: 'blocked' },
      context,
    )) as { job_id: string };
    const blocked = await waitFor(started.job_id, 'blocked', 30_000);
    expect(blocked.progress_message).toMatch(/^Blocked: Embedding server .* is unreachable/);

    const second = embeddingServer();
    await listen(second, port);
    try {
      const done = await waitFor(started.job_id, 'completed', 90_000);
      expect(done.progress_percentage).toBe(100);
    } finally {
      await stop(second);
    }
    const types = (await ledger.store.readStream(streamId('job', started.job_id))).map((e) => e.type);
    expect(types.indexOf('IndexingJobBlocked')).toBeGreaterThan(types.indexOf('IndexingJobStarted'));
    expect(types.indexOf('IndexingJobUnblocked')).toBeGreaterThan(types.indexOf('IndexingJobBlocked'));
    expect(types.at(-1)).toBe('IndexingJobCompleted');
  }, 150_000);
});
