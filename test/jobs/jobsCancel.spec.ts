import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/main.js';
import { openTestLedger } from '../support/ledger.js';
import { makeRepo } from './jobsSupport.js';

const DIMENSIONS = 8;

/** An embedding server that takes every request and answers none until released: an embedder busy with a long batch. */
const heldEmbedder = async () => {
  const held: { input: string[]; response: ServerResponse }[] = [];
  let received = 0;
  let released = false;
  const answer = (input: string[], response: ServerResponse) => {
    const data = input.map((text, index) => ({
      index,
      embedding: [...createHash('sha256').update(text).digest().subarray(0, DIMENSIONS)].map((b) => b / 255 + 0.01),
    }));
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ data }));
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received++;
      const { input } = JSON.parse(body) as { input: string[] };
      if (released) return answer(input, response);
      held.push({ input, response });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    release() {
      released = true;
      for (const { input, response } of held.splice(0)) if (!response.destroyed) answer(input, response);
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

describe('cancelling an indexing job while its chunks are being embedded', () => {
  let ledger: Ledger | undefined;
  let embedder: Awaited<ReturnType<typeof heldEmbedder>> | undefined;
  afterAll(async () => {
    embedder?.release();
    await ledger?.close();
    await embedder?.close();
  });

  it('is cancelled while the embedder is still busy with a batch, and appends nothing after the cancel', async () => {
    embedder = await heldEmbedder();
    ledger = await openTestLedger({
      CTX_EMBEDDINGS__PROVIDER: 'http',
      CTX_EMBEDDINGS__URL: embedder.url,
      CTX_EMBEDDINGS__MODEL: 'held-embedder',
      CTX_EMBEDDINGS__DIMENSIONS: String(DIMENSIONS),
    });
    await ledger.start();
    const context = {
      actor: { subject: 't', tenant: null, via: 'system' as const },
      correlationId: crypto.randomUUID(),
      project: 'default',
    };
    const status = async (jobId: string) =>
      (await ledger!.operation('get_job_status').run({ job_id: jobId }, context)) as { status: string };
    const until = async (done: () => Promise<boolean> | boolean) => {
      while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 50));
    };

    const repo = makeRepo(300);
    const { job_id: jobId } = (await ledger.operation('start_indexing_background').run({ repo_path: repo }, context)) as {
      job_id: string;
    };
    // The semantic index has a batch of the job's chunks at the embedder, which does not answer.
    await until(() => embedder!.received() > 0);
    const cancel = (await ledger.operation('cancel_job').run({ job_id: jobId }, context)) as { status: string };
    expect(cancel.status).toBe('cancelling');
    await until(async () => (await status(jobId)).status === 'cancelled');
    // Cancelled while the semantic index still waits for its first batch: not once it gave up on the embedder.
    const semantic = (await ledger.projections.status()).find((p) => p.name === 'semantic');
    expect(semantic).toMatchObject({ lastError: null });

    // The job has stopped (its repository is free again), and wrote nothing after its cancellation.
    const next = (await ledger.operation('start_indexing_background').run({ repo_path: repo }, context)) as {
      job_id: string;
    };
    expect(next.job_id).not.toBe(jobId);
    await ledger.operation('cancel_job').run({ job_id: next.job_id }, context);
    const events = await ledger.store.readAll({ maxCount: 100_000 });
    const cancelledAt = events.findIndex((e) => e.type === 'IndexingJobCancelled' && e.data.jobId === jobId);
    expect(cancelledAt).toBeGreaterThan(0);
    const ingested = events.filter((e) => e.type === 'DocumentIngested');
    expect(ingested.length).toBeLessThan(300);
    expect(events.slice(cancelledAt + 1).filter((e) => e.metadata.correlationId === jobId)).toEqual([]);
  }, 120_000);
});
