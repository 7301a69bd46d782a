import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { streamId } from '../../src/domain/events.js';
import type { Ledger } from '../../src/main.js';
import { openTestLedger } from '../support/ledger.js';
import { assertContract, makeRepo } from './jobsSupport.js';

const DIMENSIONS = 8;

/**
 * A tiny OpenAI-compatible embedding server standing in for Ollama: vectors from a hash of each
 * text. While `down`, it drops connections as they open: the port stays its own, so no other
 * process can take it before it comes back.
 */
const embeddingServer = () => {
  const server = createServer((request, response) => {
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
  let down = false;
  server.on('connection', (socket) => {
    if (down) socket.destroy();
  });
  return {
    server,
    setDown(next: boolean) {
      down = next;
      if (down) server.closeAllConnections();
    },
  };
};

const listen = (server: Server) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
const stop = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('an indexing job whose embedding service goes away', () => {
  let ledger: Ledger | undefined;
  let embedder: ReturnType<typeof embeddingServer> | undefined;
  afterAll(async () => {
    if (embedder?.server.listening) await stop(embedder.server);
    await ledger?.close();
  });

  it('is blocked while the embedder is down, completes once it is back, and is cancelled while blocked', async () => {
    embedder = embeddingServer();
    const port = await listen(embedder.server);
    embedder.setDown(true);
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

    embedder.setDown(false);
    const done = await waitFor(started.job_id, 'completed', 90_000);
    expect(done.progress_percentage).toBe(100);
    const types = (await ledger.store.readStream(streamId('job', started.job_id))).map((e) => e.type);
    expect(types.indexOf('IndexingJobBlocked')).toBeGreaterThan(types.indexOf('IndexingJobStarted'));
    expect(types.indexOf('IndexingJobUnblocked')).toBeGreaterThan(types.indexOf('IndexingJobBlocked'));
    expect(types.at(-1)).toBe('IndexingJobCompleted');

    // The embedder goes away again: a blocked job is cancelled at once, and holds its repository until it is.
    embedder.setDown(true);
    // New content, so the embedding cache cannot answer for the embedder.
    const repo = makeRepo(0);
    for (let i = 0; i < 5; i++) writeFileSync(path.join(repo, `note${i}.md`), `# Note ${i}\n\nnever embedded before ${crypto.randomUUID()}\n`);
    const blockedAgain = (await ledger.operation('start_indexing_background').run({ repo_path: repo, project_id: 'blocked' }, context)) as {
      job_id: string;
    };
    await waitFor(blockedAgain.job_id, 'blocked', 30_000);
    const cancel = (await ledger.operation('cancel_job').run({ job_id: blockedAgain.job_id }, context)) as { status: string };
    expect(cancel.status).toBe('cancelling');
    await expect(
      ledger.operation('start_indexing_background').run({ repo_path: repo, project_id: 'blocked' }, context),
    ).rejects.toMatchObject({ name: 'DuplicateJobError', details: { job_id: blockedAgain.job_id } });
    await waitFor(blockedAgain.job_id, 'cancelled', 30_000);
    const cancelledTypes = (await ledger.store.readStream(streamId('job', blockedAgain.job_id))).map((e) => e.type);
    // Cancelled as it stood: the embedder never came back, so the job was never unblocked.
    expect(cancelledTypes).toContain('IndexingJobBlocked');
    expect(cancelledTypes).not.toContain('IndexingJobUnblocked');
    expect(cancelledTypes.at(-1)).toBe('IndexingJobCancelled');
    const next = (await ledger.operation('start_indexing_background').run({ repo_path: repo, project_id: 'blocked' }, context)) as {
      job_id: string;
    };
    expect(next.job_id).not.toBe(blockedAgain.job_id);
  }, 150_000);
});
