import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { streamId } from '../../src/domain/events.js';
import { openLedger, type Ledger } from '../../src/main.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { until } from '../support/polling.js';
import { makeRepo } from './jobsSupport.js';

/** An embedding server that drops every connection: a job that needs it stays blocked. */
const unreachableEmbedder = async () => {
  const server = createServer();
  server.on('connection', (socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

describe('a job whose cancel was recorded while no process ran it', () => {
  const opened: Ledger[] = [];
  let embedder: Awaited<ReturnType<typeof unreachableEmbedder>> | undefined;
  afterAll(async () => {
    for (const ledger of opened) await ledger.close().catch(() => undefined);
    await embedder?.close();
  });

  it('ends cancelled when the ledger starts again, never failed, and runs no further', async () => {
    embedder = await unreachableEmbedder();
    const dataDir = tempDataDir();
    const open = async () => {
      const ledger = await openLedger(
        loadConfig({
          env: {
            CTX_STORAGE__DATA_DIR: dataDir,
            CTX_EMBEDDINGS__PROVIDER: 'http',
            CTX_EMBEDDINGS__URL: embedder!.url,
            CTX_EMBEDDINGS__MODEL: 'hash-embedder',
            CTX_EMBEDDINGS__DIMENSIONS: '8',
            CTX_SERVER__BIND: '127.0.0.1:0',
            ...tempRootsEnv(),
          },
        }),
        { logger: pino({ level: 'silent' }) },
      );
      opened.push(ledger);
      return ledger;
    };
    const context = { actor: { subject: 't', tenant: null, via: 'system' as const }, correlationId: crypto.randomUUID(), project: 'default' };
    const status = async (ledger: Ledger, jobId: string) =>
      (await ledger.operation('get_job_status').run({ job_id: jobId }, context)) as { status: string };

    // A job left blocked on its embedder when the process stops: unfinished, to be resumed.
    const first = await open();
    await first.start();
    const { job_id: jobId } = (await first.operation('start_indexing_background').run(
      { repo_path: makeRepo(5, 'cancel-restart-'), project_id: 'restart' },
      context,
    )) as { job_id: string };
    await until(() => status(first, jobId), (s) => s.status === 'blocked');
    await first.close();

    // Its cancel is recorded while nothing runs it (as when the process that ran it died after the request).
    const second = await open();
    const cancel = (await second.operation('cancel_job').run({ job_id: jobId }, context)) as { status: string };
    expect(cancel.status).toBe('cancelling');
    await second.close();

    const third = await open();
    await third.start();
    await until(() => status(third, jobId), (s) => s.status !== 'blocked' && s.status !== 'running');
    expect((await status(third, jobId)).status).toBe('cancelled');
    const types = (await third.store.readStream(streamId('job', jobId))).map((e) => e.type);
    expect(types).not.toContain('IndexingJobFailed');
    expect(types.at(-1)).toBe('IndexingJobCancelled');
    expect(types.slice(types.indexOf('IndexingJobCancellationRequested'))).not.toContain('IndexingJobProgressed');
  }, 120_000);
});
