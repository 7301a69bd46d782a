import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { rerankerModelDir } from '../../src/modules/rerankerFromConfig.js';
import { ALL_SCOPES, ingest, startApiServer, type ApiServer } from '../api/apiServer.js';

/** The stand-in cross-encoder's judgement: passages about bread first, then kitchens, then the rest. */
const relevance = (text: string) => (text.includes('bread') ? 0.9 : text.includes('kitchen') ? 0.5 : 0.1);

/** A reranking server speaking TEI's `/rerank` and Cohere/Jina's `/v1/rerank`, up or answering 503. */
const startRerankerStandIn = async () => {
  let up = true;
  const seen: { path: string; authorization?: string }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (part: Buffer) => (body += part.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
      res.setHeader('content-type', 'application/json');
      if (!up) {
        res.statusCode = 503;
        res.end(JSON.stringify({ error: 'model is loading' }));
        return;
      }
      const request = JSON.parse(body) as { query: string; texts?: string[]; documents?: string[] };
      if (req.url === '/rerank') {
        res.end(JSON.stringify(request.texts!.map((text, index) => ({ index, score: relevance(text) }))));
      } else if (req.url === '/v1/rerank') {
        const results = request.documents!.map((text, index) => ({ index, relevance_score: relevance(text) }));
        res.end(JSON.stringify({ results: results.sort((a, b) => b.relevance_score - a.relevance_score) }));
      } else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    setUp: (next: boolean) => (up = next),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

// Every document has the query's word "notes"; keyword ranking favours the one that repeats it.
const DOCUMENTS = [
  { source_id: 'garage.md', title: 'Garage notes', body: 'Notes, notes and notes: change the engine oil of the car.' },
  { source_id: 'kitchen.md', title: 'Kitchen notes', body: 'Notes on the kitchen: clean the oven on Sundays.' },
  { source_id: 'bakery.md', title: 'Bakery notes', body: 'Notes: bake the bread at two hundred degrees.' },
];

interface Answer {
  results: { source_id: string; explain?: { rerank?: number } }[];
  rerank_notice?: string;
}

describe.each([
  { provider: 'tei', path: '/rerank' },
  { provider: 'cohere', path: '/v1/rerank' },
  { provider: 'jina', path: '/v1/rerank' },
])('search reordered by a $provider reranker over HTTP', { timeout: 120_000 }, ({ provider, path }) => {
  let reranker: Awaited<ReturnType<typeof startRerankerStandIn>>;
  let api: ApiServer;

  beforeAll(async () => {
    reranker = await startRerankerStandIn();
    api = await startApiServer({
      CTX_RERANKER__PROVIDER: provider,
      CTX_RERANKER__URL: reranker.url,
      CTX_RERANKER__MODEL: 'stand-in-cross-encoder',
      CTX_RERANKER__API_KEY: 'secret-key',
      CTX_RERANKER__TIMEOUT_MS: '2000',
    });
    await ingest(api, 'acme', DOCUMENTS);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await reranker?.close();
  });

  const search = async (): Promise<Answer> => {
    const response = await fetch(`${api.server.url}/tools/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${api.token(ALL_SCOPES, 'acme')}` },
      body: JSON.stringify({ query: 'notes', mode: 'keyword', explain: true }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Answer;
  };

  it("orders the results by the reranker's scores and shows them in explain", async () => {
    const answer = await search();
    expect(answer.results.map((r) => r.source_id)).toEqual(['bakery.md', 'kitchen.md', 'garage.md']);
    expect(answer.results.map((r) => r.explain?.rerank)).toEqual([0.9, 0.5, 0.1]);
    expect(answer.rerank_notice).toBeUndefined();
    expect(reranker.seen.at(-1)).toEqual({ path, authorization: 'Bearer secret-key' });
  });

  it('answers in fused order, and says so, while the reranker fails', async () => {
    reranker.setUp(false);
    try {
      const answer = await search();
      expect(answer.results[0]?.source_id).toBe('garage.md');
      expect(answer.results.every((r) => r.explain?.rerank === undefined)).toBe(true);
      expect(answer.rerank_notice).toMatch(/fused order: The reranker at .* answered 503/);
    } finally {
      reranker.setUp(true);
    }
  });
});

describe('reranker configuration', () => {
  it('asks for a url and, for Cohere or Jina, a model', () => {
    expect(() => loadConfig({ env: { CTX_RERANKER__PROVIDER: 'tei' } })).toThrow(/reranker provider needs a url/);
    expect(() =>
      loadConfig({ env: { CTX_RERANKER__PROVIDER: 'jina', CTX_RERANKER__URL: 'http://127.0.0.1:1' } }),
    ).toThrow(/"cohere" or "jina" needs a model/);
    expect(loadConfig({ env: {} }).reranker.provider).toBe('none');
  });

  it('reads a local cross-encoder from the reranker folder inside the model folder unless model_dir says otherwise', () => {
    const local = loadConfig({ env: { CTX_RERANKER__PROVIDER: 'local', CTX_EMBEDDINGS__MODEL_DIR: '/opt/models' } });
    expect(rerankerModelDir(local)).toBe(path.join('/opt/models', 'reranker'));
    const elsewhere = loadConfig({ env: { CTX_RERANKER__PROVIDER: 'local', CTX_RERANKER__MODEL_DIR: '/srv/cross-encoders' } });
    expect(rerankerModelDir(elsewhere)).toBe('/srv/cross-encoders');
  });
});
