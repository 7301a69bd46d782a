import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type Ledger, type RunningServer } from '../../src/main.js';
import { openTestLedger } from '../support/ledger.js';
import { assertToolApiShape } from '../support/toolApiSchemas.js';
import { EMBEDDING_MODEL, itWith } from '../support/requirements.js';

const semanticEnabled = EMBEDDING_MODEL.available;

/** A small repository: prose, TypeScript and Python, plus a binary file that must be skipped. */
const makeRepository = () => {
  const root = mkdtempSync(path.join(tmpdir(), 'ctx-repo-'));
  mkdirSync(path.join(root, 'docs'));
  mkdirSync(path.join(root, 'src'));
  writeFileSync(
    path.join(root, 'docs/auth.md'),
    '# Authentication\n\nAccess tokens expire after one hour.\n\n## Refreshing tokens\n\nThe session service refreshes ' +
      'JWT access tokens in the background, shortly before they expire, using the refresh token.\n',
  );
  writeFileSync(
    path.join(root, 'docs/payments.md'),
    '# Payments\n\nFailed card charges are retried three times with exponential backoff before the invoice is marked unpaid.\n',
  );
  writeFileSync(
    path.join(root, 'src/tokens.ts'),
    'export class TokenRefresher {\n  refresh(token: string): string {\n    return rotate(token);\n  }\n}\n\n' +
      'export function rotate(token: string): string {\n  return token.split("").reverse().join("");\n}\n',
  );
  writeFileSync(path.join(root, 'src/billing.py'), 'def retry_charge(invoice):\n    """Retry a failed card charge."""\n    return invoice\n');
  writeFileSync(path.join(root, 'src/logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
  return root;
};

describe('documents and search through HTTP and MCP', () => {
  let server: RunningServer;
  let client: Client;
  let root: string;
  let ledger: Ledger;
  const post = (url: string, body: unknown) =>
    fetch(`${server.url}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  beforeAll(async () => {
    root = makeRepository();
    ledger = await openTestLedger();
    server = await startServer(ledger);
    client = new Client({ name: 'search-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  }, 120_000);
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('ingests a folder through the MCP ingest tool, skipping the binary file', async () => {
    const result = await client.callTool({ name: 'documents.ingest', arguments: { paths: [root] } });
    expect(result.isError).toBeFalsy();
    const tally = result.structuredContent as { created: number; skipped: number; problems: { reason: string }[] };
    expect(tally.created).toBe(4);
    expect(tally.skipped).toBe(1);
    expect(tally.problems[0]?.reason).toMatch(/binary/);
    const again = (await client.callTool({ name: 'documents.ingest', arguments: { paths: [root] } })).structuredContent;
    expect(again).toMatchObject({ created: 0, unchanged: 4 });
    // An ingest answers before the semantic index has embedded it: the searches below rank by meaning too.
    await ledger.catchUp();
  });

  it("finds documents by keyword over HTTP, in the tool API's shape, with snippets around the terms", async () => {
    const response = await post('/tools/search', { query: 'refresh tokens', mode: 'keyword', limit: 5 });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { results: { source_id: string; snippet: string }[] };
    assertToolApiShape('search', body);
    expect(body.results[0]?.source_id).toMatch(/auth\.md$|tokens\.ts$/);
    expect(body.results.map((r) => r.source_id)).not.toContain(expect.stringMatching(/payments/));
    expect(body.results[0]?.snippet.toLowerCase()).toContain('refresh');
  });

  it('filters by source, and by update time', async () => {
    const none = await post('/tools/search', { query: 'tokens', source: 'elsewhere' });
    expect(((await none.json()) as { results: unknown[] }).results).toEqual([]);
    const future = await post('/tools/search', { query: 'tokens', filters: { since: '2999-01-01T00:00:00Z' } });
    expect(((await future.json()) as { results: unknown[] }).results).toEqual([]);
  });

  it('gets a whole document with its chunks, and answers unknown or malformed ids', async () => {
    const found = (await (await post('/tools/search', { query: 'exponential backoff' })).json()) as {
      results: { id: string }[];
    };
    const id = found.results[0]!.id;
    const response = await post('/tools/get', { id });
    const doc = (await response.json()) as { body: string; chunks: { text: string }[]; content_type: string };
    assertToolApiShape('get', doc);
    expect(doc.body).toContain('retried three times');
    expect(doc.chunks.map((c) => c.text).join('\n')).toContain('exponential backoff');
    expect(doc.content_type).toBe('text/markdown');

    const missing = await post('/tools/get', { id: crypto.randomUUID() });
    expect(missing.status).toBe(404);
    const missingBody: unknown = await missing.json();
    assertToolApiShape('error', missingBody);
    expect(missingBody).toMatchObject({ error: { code: 'not_found' } });
    const malformed = await post('/tools/get', { id: 'not-a-uuid' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { code: 'bad_request' } });
  });

  it('answers bad search input with bad_request', async () => {
    for (const body of [{ query: '' }, { query: 'x', limit: 0 }, { query: 'x', limit: 1000 }, { query: 'x', mode: 'fuzzy' }, '{"query":']) {
      const response = await post('/tools/search', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      const error: unknown = await response.json();
      assertToolApiShape('error', error);
      expect(error).toMatchObject({ error: { code: 'bad_request' } });
    }
  });

  it('lists sources with document counts', async () => {
    const response = await fetch(`${server.url}/tools/sources`);
    const body = (await response.json()) as { sources: { name: string; doc_count: number }[] };
    assertToolApiShape('sources', body);
    expect(body.sources).toContainEqual(expect.objectContaining({ name: 'filesystem', doc_count: 4 }));
  });

  it('splits code into named chunks with line ranges', async () => {
    const result = await client.callTool({ name: 'documents.chunks', arguments: { query: 'TokenRefresher', limit: 5 } });
    const { chunks } = result.structuredContent as { chunks: { symbol: string | null; start_line: number | null }[] };
    expect(chunks).toContainEqual(expect.objectContaining({ symbol: 'TokenRefresher', start_line: 1 }));
  });

  itWith(EMBEDDING_MODEL, 'ranks by meaning in semantic and hybrid modes, with component scores', async () => {
    const semantic = (await (
      await post('/tools/search', { query: 'what happens when a credit card payment does not go through', mode: 'semantic', limit: 3 })
    ).json()) as { results: { source_id: string }[] };
    assertToolApiShape('search', semantic);
    expect(semantic.results[0]?.source_id).toMatch(/payments\.md$|billing\.py$/);

    const hybrid = await client.callTool({
      name: 'context.search',
      arguments: { query: 'renewing expired credentials', mode: 'hybrid', limit: 3, explain: true },
    });
    const { results } = hybrid.structuredContent as {
      results: { source_id: string; explain: { keyword: unknown; semantic: { rank: number } | null } }[];
    };
    expect(results[0]?.source_id).toMatch(/auth\.md$|tokens\.ts$/);
    expect(results[0]?.explain.semantic).not.toBeNull();
  });

  itWith(EMBEDDING_MODEL, 'ranks a /tools/search request that names no mode hybrid when a model is loaded', async () => {
    const response = await post('/tools/search', { query: 'renewing expired credentials', limit: 3, explain: true });
    expect(response.status).toBe(200);
    const { results } = (await response.json()) as { results: { explain: { semantic: { rank: number } | null } }[] };
    expect(results.length).toBeGreaterThan(0);
    expect(results[0]!.explain.semantic?.rank).toBeGreaterThan(0);
  });

  it.skipIf(semanticEnabled)('ranks a /tools/search request that names no mode by keyword when no model is configured', async () => {
    const response = await post('/tools/search', { query: 'refresh tokens', limit: 3 });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { results: { source_id: string }[] };
    assertToolApiShape('search', body);
    expect(body.results[0]?.source_id).toMatch(/auth\.md$|tokens\.ts$/);
  });

  it.skipIf(semanticEnabled)('answers semantic search with embeddings_disabled when no model is configured', async () => {
    const response = await post('/tools/search', { query: 'tokens', mode: 'semantic' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: 'embeddings_disabled' } });
  });
});
