import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureBuilt, killServed, serveBuilt } from '../support/builtCli.js';
import { EVERY_TOOLSET, tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { EMBEDDING_MODEL, describeWith, testModelDir } from '../support/requirements.js';

/**
 * Loaded into the server: each SIGUSR2 sets its wall clock back a second, as a time sync may. A
 * wait measured against the wall clock outlasts its timer then, as it does by a millisecond
 * whenever a timer fires a little early.
 */
const CLOCK_SET_BACK = `data:text/javascript,${encodeURIComponent(
  "const now = Date.now; let back = 0; Date.now = () => now() - back; process.on('SIGUSR2', () => { back += 1000; });",
)}`;

const ENV = {
  CTX_EMBEDDINGS__PROVIDER: 'local',
  CTX_EMBEDDINGS__MODEL_DIR: testModelDir ?? '',
  CTX_JOBS__PROGRESS_INTERVAL_MS: '100',
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${CLOCK_SET_BACK}`.trim(),
  ...EVERY_TOOLSET,
  ...tempRootsEnv(),
};

/** A repository of small source files no other run has: none of its chunks is embedded yet. */
const sourceTree = (files: number): string => {
  const root = tempDataDir('ctx-job-embedding-');
  const run = randomUUID();
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, `module${i % 4}`);
    mkdirSync(dir, { recursive: true });
    const functions = Array.from(
      { length: 6 },
      (_, f) =>
        `/** Computes the ${f}th measure of part ${i} (${run}). */\nexport function measure${i}x${f}(input: number): number {\n  return input * ${i + 1} + ${f};\n}\n`,
    );
    writeFileSync(path.join(dir, `part${i}.ts`), functions.join('\n'));
  }
  return root;
};

afterAll(killServed);
beforeAll(ensureBuilt, 300_000);

/** The built `ctx serve` on a free port. */
const serve = (dataDir: string) => serveBuilt(['--data-dir', dataDir, '--bind', '127.0.0.1:0'], { env: ENV });

interface Status {
  status: string;
  progress_message: string;
  estimated_time_remaining_seconds?: number;
}

describeWith(EMBEDDING_MODEL, 'an indexing job while the local model embeds its chunks', () => {
  it('reports its embedded chunks moving on as the semantic index moves on, though the server clock was set back, and times the rest from them', async () => {
    const { url, child } = await serve(tempDataDir('ctx-job-embedding-data-'));
    /** The vectors the server's model has made, as each call to it returns. */
    const vectorsMade = async () =>
      Number(/^ctx_embedding_vectors_total (\d+)/m.exec(await (await fetch(`${url}/metrics`)).text())![1]);
    const client = new Client({ name: 'job-embedding-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    const call = async <T>(name: string, args: Record<string, unknown>): Promise<T> =>
      (await client.callTool({ name, arguments: args })).structuredContent as T;
    try {
      const { job_id } = await call<{ job_id: string }>('start_indexing_background', {
        repo_path: sourceTree(48),
      });

      // Sampled over the run: the count the job reports, and the vectors the server has made.
      const samples: { embedded: number; made: number }[] = [];
      const timesLeftWithNoneEmbedded: string[] = [];
      let timesLeft = 0;
      let setBack = 0;
      for (
        let s = await call<Status>('get_job_status', { job_id });
        s.status !== 'completed';
        s = await call<Status>('get_job_status', { job_id })
      ) {
        expect(['pending', 'running']).toContain(s.status);
        const embedding = /^Generating embeddings: ([\d,]+)\//.exec(s.progress_message);
        if (embedding && s.estimated_time_remaining_seconds !== undefined) {
          timesLeft++;
          if (embedding[1] === '0')
            timesLeftWithNoneEmbedded.push(`${s.progress_message}: ${s.estimated_time_remaining_seconds} s`);
        }
        if (embedding) {
          // The clock goes back while the job waits for the semantic index, three times over.
          if (setBack++ < 3) child.kill('SIGUSR2');
          else
            samples.push({ embedded: Number(embedding[1]!.replaceAll(',', '')), made: await vectorsMade() });
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }

      const moves = (values: readonly unknown[]) =>
        values.filter((v, i) => i > 0 && v !== values[i - 1]).length;
      const seen = samples.map((s) => `${s.embedded}/${s.made}`).join(' ');
      // The run is long enough to tell: the server's model made vectors several times meanwhile.
      expect(moves(samples.map((s) => s.made)), seen).toBeGreaterThanOrEqual(2);
      expect(moves(samples.map((s) => s.embedded)), seen).toBeGreaterThanOrEqual(2);
      // The time left is the chunks left at the embedding rate: none before a chunk is embedded, then one.
      expect(timesLeftWithNoneEmbedded).toEqual([]);
      expect(timesLeft).toBeGreaterThan(0);
      // Every step of the job says so, those too quick to be sampled: none before its first file was even stored.
      const { events } = await call<{
        events: {
          type: string;
          data: { phase?: string; message?: string; estimatedSecondsRemaining?: number };
        }[];
      }>('ledger.history', { stream: `job-${job_id}`, limit: 500 });
      const progressed = events.filter((e) => e.type === 'IndexingJobProgressed').map((e) => e.data);
      expect(progressed.filter((p) => p.phase === 'scanning').length).toBeGreaterThan(0);
      expect(
        progressed.filter((p) => p.phase === 'scanning' && p.estimatedSecondsRemaining !== undefined),
      ).toEqual([]);
    } finally {
      await client.close();
      child.kill('SIGTERM');
    }
  }, 300_000);
});
