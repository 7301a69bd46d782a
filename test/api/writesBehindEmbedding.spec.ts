import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCtx, spawnCtx } from '../support/cli.js';
import { tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from './apiServer.js';

const DIMENSIONS = 8;
/** Texts with this word are held unanswered: the semantic index falls behind on them and stays there. */
const HELD = 'backlogged';

/** An OpenAI-style embedding server on loopback that answers at once, except for held texts. */
const embeddingServer = () => {
  const held: ServerResponse[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const { input } = JSON.parse(body) as { input: string[] };
      if (input.some((text) => text.includes(HELD))) return void held.push(response);
      const data = input.map((text, index) => ({
        index,
        embedding: [...createHash('sha256').update(text).digest().subarray(0, DIMENSIONS)].map((b) => b / 255 + 0.01),
      }));
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ data }));
    });
  });
  return {
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        held.forEach((response) => response.destroy());
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

const embedderEnv = (url: string): NodeJS.ProcessEnv => ({
  CTX_EMBEDDINGS__PROVIDER: 'http',
  CTX_EMBEDDINGS__URL: url,
  CTX_EMBEDDINGS__MODEL: 'hash-embedder',
  CTX_EMBEDDINGS__DIMENSIONS: String(DIMENSIONS),
});

describe('writes while the semantic index is behind', { timeout: 180_000 }, () => {
  const embedder = embeddingServer();
  let api: ApiServer;
  let token: string;
  beforeAll(async () => {
    api = await startApiServer(embedderEnv(await embedder.listen()));
    token = api.token(ALL_SCOPES);
    const documents = [{ source_id: 'notes/held.md', title: 'Held', body: `Token buckets, ${HELD} for embedding.` }];
    await api.ledger
      .operation('documents.ingest_batch')
      .run({ source: 'filesystem', documents }, { actor: { subject: 't', tenant: 'acme', via: 'cli' }, correlationId: crypto.randomUUID(), project: 'acme' });
  });
  afterAll(async () => {
    await api?.close();
    await embedder.close();
  });

  it('answers connector writes over HTTP without waiting for the semantic index, and the next read sees them', async () => {
    const created = await api.call('POST', '/connectors', {
      token,
      body: { type: 'jira', name: 'Tickets', config: {} },
    });
    expect(created.status).toBe(201);
    expect(created.body.settling).toBeUndefined();
    const id = created.body.id as string;
    expect((await api.call('GET', `/connectors/${id}`, { token })).status).toBe(200);

    const updated = await api.call('PUT', `/connectors/${id}`, { token, body: { name: 'Renamed', config: {} } });
    expect(updated.status).toBe(200);
    expect((await api.call('GET', `/connectors/${id}`, { token })).body).toMatchObject({ name: 'Renamed' });

    expect((await api.call('DELETE', `/connectors/${id}`, { token })).status).toBe(204);
    expect((await api.call('GET', `/connectors/${id}`, { token })).status).toBe(404);
  });

  it('says so when a search is answered from a partly embedded index', async () => {
    const search = (mode: string) =>
      fetch(`${api.server.url}/tools/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: 'token buckets', mode }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
    const hybrid = await search('hybrid');
    expect(hybrid.status).toBe(200);
    expect(hybrid.body.notice).toMatch(/semantic index is still embedding/);
    const keyword = await search('keyword');
    expect(keyword.body.notice).toBeUndefined();
  });
});

describe('ctx on its own while the semantic index is behind', { timeout: 300_000 }, () => {
  const embedder = embeddingServer();
  let env: NodeJS.ProcessEnv;
  const dataDir = tempDataDir('ctx-behind-');
  beforeAll(async () => {
    env = { ...embedderEnv(await embedder.listen()), ...tempRootsEnv(), CTX_LOG__LEVEL: 'silent' };
  });
  afterAll(() => embedder.close());

  it('ingests and lists sources without waiting for embeddings; a search that must wait says for what and that Ctrl-C is safe', async () => {
    const folder = path.join(tempDataDir('ctx-behind-docs-'), 'docs');
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'held.md'), `# Buckets\n\nToken buckets, ${HELD} for embedding.\n`);

    const ingested = await runCtx(['ingest', folder, '--data-dir', dataDir], env);
    expect(ingested.code).toBe(0);
    expect(ingested.stdout).toMatch(/1 new/);

    const sources = await runCtx(['sources', '--data-dir', dataDir, '--json'], env);
    expect(sources.code).toBe(0);
    expect(sources.stdout).toMatch(/"doc_count": 1/);

    const keyword = await runCtx(['search', 'token', 'buckets', '--mode', 'keyword', '--data-dir', dataDir], env);
    expect(keyword.code).toBe(0);
    expect(keyword.stdout).toMatch(/Buckets/);

    const waiting = spawnCtx(['search', 'token', 'buckets', '--mode', 'hybrid', '--data-dir', dataDir], env);
    let stderr = '';
    const said = new Promise<void>((resolve) =>
      waiting.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('Ctrl-C is safe')) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => waiting.on('exit', (code) => resolve(code)));
    await Promise.race([said, exited]);
    expect(stderr).toMatch(/waiting for the semantic index to apply \d+ more events \(Ctrl-C is safe/);
    waiting.kill('SIGINT');
    await exited;
  });
});
