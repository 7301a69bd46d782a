import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCtx, spawnCtx } from '../support/cli.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { startMeiliStandIn, type MeiliStandIn } from '../support/meiliStandIn.js';
import { until } from '../support/polling.js';

const REFUSED = 'Meilisearch refused the configured API key: The provided API key is invalid. (HTTP 403, invalid_api_key)';

describe("a Meilisearch that refuses the ledger's API key or its documents, or is down, from outside", { timeout: 120_000 }, () => {
  let meili: MeiliStandIn;
  const started: { kill: () => void }[] = [];

  beforeAll(async () => {
    meili = await startMeiliStandIn('refusing');
  });
  afterAll(async () => {
    for (const child of started) child.kill();
    await meili?.close();
  });

  const env = (): NodeJS.ProcessEnv => ({
    CTX_EMBEDDINGS__PROVIDER: 'none',
    CTX_SEARCH__KEYWORD_INDEX: 'meilisearch',
    CTX_SEARCH__MEILISEARCH_URL: meili.url,
    CTX_SEARCH__MEILISEARCH_API_KEY: 'not-a-key-it-knows',
    ...tempRootsEnv(),
  });

  /** A keyword search from a fresh process finds these files, and only these. */
  const expectKeywordSearchFinds = async (query: string, dataDir: string, files: string[]) => {
    const found = await runCtx(['search', query, '--mode', 'keyword', '--json', '--data-dir', dataDir], env());
    expect(found.code, found.stderr).toBe(0);
    const { results } = JSON.parse(found.stdout) as { results: { source_id: string }[] };
    expect(results.map((r) => r.source_id)).toEqual(files);
  };

  /** `ctx serve` on a fresh data directory and a free port, once it listens. */
  const serve = async (serverEnv: NodeJS.ProcessEnv) => {
    const dataDir = tempDataDir();
    const child = spawnCtx(['serve', '--data-dir', dataDir, '--bind', '127.0.0.1:0'], serverEnv);
    let exited = false;
    child.on('exit', () => (exited = true));
    started.push({ kill: () => exited || child.kill('SIGKILL') });
    const serverFile = path.join(dataDir, 'server.json');
    await until(() => exited || existsSync(serverFile));
    expect(exited).toBe(false);
    const { url } = JSON.parse(readFileSync(serverFile, 'utf8')) as { url: string };
    const stop = async () => {
      child.kill('SIGTERM');
      await until(() => exited);
    };
    return { url, stop };
  };

  it('ctx says so at once, keeps what it stored, and indexes it once the key is accepted', async () => {
    const dataDir = tempDataDir();
    const file = path.join(tempDataDir('ctx-notes-'), 'lighthouse.md');
    writeFileSync(file, '# Lighthouse\n\nThe keeper climbs the lighthouse stairs at dusk.\n');

    // Before, the command waited an hour for the keyword index, saying only that it was waiting.
    const ingest = await runCtx(['ingest', file, '--data-dir', dataDir], env());
    expect(ingest.code).toBe(2);
    expect(ingest.stderr).toContain(`ctx: Stored; the indexes apply it once this is mended: ${REFUSED}`);
    expect(ingest.stderr).toContain('Set search.meilisearch_api_key');

    const refused = await runCtx(['search', 'lighthouse', '--mode', 'keyword', '--data-dir', dataDir], env());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`ctx: ${REFUSED}`);

    await meili.set('up');
    try {
      await expectKeywordSearchFinds('lighthouse', dataDir, [file]);
    } finally {
      await meili.set('refusing');
    }
  });

  it("ctx says at once that the index is another's, what makes it right, and keeps what it stored", async () => {
    const dataDir = tempDataDir();
    const file = path.join(tempDataDir('ctx-notes-'), 'harbour.md');
    writeFileSync(file, '# Harbour\n\nThe pilot boat waits at the harbour mouth.\n');
    await meili.set('rejecting');
    try {
      // Before, the command waited an hour for the keyword index, as for a refused key.
      const ingest = await runCtx(['ingest', file, '--data-dir', dataDir], env());
      expect(ingest.code).toBe(2);
      expect(ingest.stderr).toMatch(
        /ctx: Stored; the indexes apply it once this is mended: Meilisearch task \d+ \(add 1 chunks\) failed: Index `ctx_chunks`: Index already has a primary key: `uid`\. \(index_primary_key_already_exists\)\. The index 'ctx_chunks' is not as the ledger makes it; `ctx projections rebuild keyword` makes it anew/,
      );

      await meili.set('up');
      await expectKeywordSearchFinds('harbour', dataDir, [file]);
    } finally {
      await meili.set('refusing');
    }
  });

  it('ctx ingest --jsonl goes on storing while Meilisearch is down, says so, and every line is indexed once it is back', async () => {
    const dataDir = tempDataDir();
    const lines = 1_200;
    const file = path.join(tempDataDir('ctx-jsonl-'), 'notes.jsonl');
    writeFileSync(
      file,
      Array.from({ length: lines }, (_, i) => JSON.stringify({ source_id: `note-${i}`, body: `Note ${i} on the lighthouse.` })).join('\n'),
    );
    await meili.set('down');
    try {
      // Three batches: each used to wait out a minute for the keyword index, the first one still
      // did, past this test's bound; now each ends once a retry has failed too.
      const load = await runCtx(['ingest', '--jsonl', file, '--source', 'notes', '--data-dir', dataDir], env());
      expect(load.code).toBe(1);
      expect(load.stderr).toContain('ctx: Stored; the indexes apply it once this is mended: Meilisearch is unavailable');
      const sources = await runCtx(['sources', '--json', '--data-dir', dataDir], env());
      expect(JSON.parse(sources.stdout)).toMatchObject({ sources: [expect.objectContaining({ name: 'notes', doc_count: lines })] });

      await meili.set('up');
      const found = await runCtx(['search', 'lighthouse', '--mode', 'keyword', '--json', '--data-dir', dataDir], env());
      expect(found.code, found.stderr).toBe(0);
      const indexed = [...meili.documents('ctx_chunks').values()].filter((doc) => doc.source === 'notes');
      expect(indexed).toHaveLength(lines);
    } finally {
      await meili.set('refusing');
    }
  }, 50_000);

  it('a server says so in its health, answers a write as stored and not yet searchable, and a search with the reason', async () => {
    const { url, stop } = await serve(env());

    // Before anything is written, health says search cannot be served, and why.
    const health = (await (await fetch(`${url}/api/v1/health`)).json()) as {
      status: string;
      problems?: { service: string; projection: string; error: string }[];
    };
    expect(health.status).toBe('degraded');
    expect(health.problems?.map(({ service, projection }) => ({ service, projection }))).toEqual([{ service: 'search', projection: 'keyword' }]);
    expect(health.problems?.[0]?.error).toContain(REFUSED);

    const post = (route: string, body: object) =>
      fetch(`${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const written = await post('/api/v1/operations/documents.ingest_batch', {
      source: 'notes',
      documents: [{ source_id: 'lighthouse', title: 'Lighthouse', body: 'The keeper climbs the lighthouse stairs at dusk.' }],
    });
    expect(written.status).toBe(200);
    const answer = (await written.json()) as { results: { outcome: string }[]; settling?: { message: string } };
    expect(answer.results).toEqual([expect.objectContaining({ outcome: 'created' })]);
    expect(answer.settling?.message).toContain(`a read model cannot apply it yet (${REFUSED}`);

    const search = await post('/tools/search', { query: 'lighthouse', mode: 'keyword' });
    const body = JSON.stringify(await search.json());
    expect(search.status).toBe(500);
    expect(body).toContain(REFUSED);

    await stop();
  });

  it("with authentication on, an anonymous health check learns the status, not the servers' errors", async () => {
    const { url, stop } = await serve({
      ...env(),
      CTX_AUTH__MODE: 'on',
      CTX_AUTH__JWT_SECRET: 'a-test-secret-of-at-least-32-characters',
    });

    const answer = await fetch(`${url}/api/v1/health`);
    expect(answer.status).toBe(200);
    const text = await answer.text();
    expect(JSON.parse(text)).toMatchObject({ status: 'degraded', services: { search: 'degraded' } });
    expect(text).not.toContain('problems');
    expect(text).not.toContain(meili.url);

    await stop();
  });
});
