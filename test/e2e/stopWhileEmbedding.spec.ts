import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPglite } from '../../infra/postgres/database.js';
import { ensureBuilt, killServed, serveBuilt } from '../support/builtCli.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { EMBEDDING_MODEL, describeWith, testModelDir } from '../support/requirements.js';

const ENV = { CTX_EMBEDDINGS__PROVIDER: 'local', CTX_EMBEDDINGS__MODEL_DIR: testModelDir ?? '', ...tempRootsEnv() };
const DOCUMENTS = 600;

const eventually = async (check: () => boolean | Promise<boolean>, what: string, timeoutMs = 300_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

beforeAll(ensureBuilt, 300_000);

afterAll(killServed);

/** The built `ctx serve` on a free port, once it has said where it serves. */
const serve = async (dataDir: string) => {
  const server = await serveBuilt(['--data-dir', dataDir, '--bind', '127.0.0.1:0'], { env: ENV });
  return { ...server, kill: (signal: NodeJS.Signals) => server.child.kill(signal) };
};

interface Projection {
  name: string;
  checkpoint: string;
  lag_events: number;
}
const semantic = async (url: string): Promise<Projection> => {
  const response = await fetch(`${url}/api/v1/projections`);
  expect(response.status).toBe(200);
  const { projections } = (await response.json()) as { projections: Projection[] };
  return projections.find((p) => p.name === 'semantic')!;
};

describeWith(EMBEDDING_MODEL, 'ctx serve stopped while the semantic index embeds a backlog', () => {
  it('exits on SIGTERM without waiting for the backlog, and the next start embeds every chunk once', async () => {
    const dataDir = tempDataDir('ctx-stop-embedding-');
    const first = await serve(dataDir);
    const filler = 'A stopped server resumes its embedding where its checkpoint says. '.repeat(6);
    const response = await fetch(`${first.url}/api/v1/documents/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        source: 'backlog',
        documents: Array.from({ length: DOCUMENTS }, (_, i) => ({ source_id: `note-${i}`, title: `Note ${i}`, body: `Note ${i}. ${filler}` })),
      }),
    });
    expect(response.status).toBeLessThan(300);
    // Mid-embedding: the semantic index has work left.
    expect((await semantic(first.url)).lag_events).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await semantic(first.url)).lag_events).toBeGreaterThan(0);
    first.kill('SIGTERM');
    await eventually(first.exited, 'the server to exit', 120_000);

    const second = await serve(dataDir);
    await eventually(async () => (await semantic(second.url)).lag_events === 0, 'the semantic index to catch up');
    second.kill('SIGTERM');
    await eventually(second.exited, 'the restarted server to exit', 120_000);

    const db = await openPglite(path.join(dataDir, 'pgdata'));
    try {
      const [row] = await db.query<{ semantic: number; distinct_chunks: number; keyword: number }>(
        `SELECT (SELECT count(*)::int FROM search_semantic) AS semantic,
                (SELECT count(DISTINCT chunk_id)::int FROM search_semantic) AS distinct_chunks,
                (SELECT count(*)::int FROM search_keyword) AS keyword`,
      );
      expect(row!.keyword).toBeGreaterThanOrEqual(DOCUMENTS);
      expect(row!.semantic).toBe(row!.keyword);
      expect(row!.distinct_chunks).toBe(row!.semantic);
    } finally {
      await db.close();
    }
  }, 600_000);
});
