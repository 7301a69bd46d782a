import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchOutput } from '../../queries/search/searchDocuments.js';
import { loadConfig } from '../../src/config.js';
import { openLedger, type Ledger } from '../../src/main.js';
import { type OperationContext } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { tempDataDir } from '../support/ledger.js';
import { startMeiliStandIn, type MeiliStandIn } from '../support/meiliStandIn.js';

const context = (): OperationContext => ({
  actor: { subject: 'test', tenant: null, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: DEFAULT_PROJECT,
});

const DIMENSIONS = 32;
/** Bag-of-words vectors: texts that share words are near each other, which is all ranking needs here. */
const vectorOf = (text: string) => {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().split(/\W+/).filter(Boolean)) {
    let hash = 0;
    for (const c of word) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
    vector[hash % DIMENSIONS]! += 1;
  }
  vector[0]! += 0.01;
  return vector;
};

/**
 * An Ollama-compatible embedding server in the embedder's place: up, answering 503, refusing the key
 * with 401, or without the model (404).
 */
const FAILURES = {
  failing: { status: 503, error: 'model is loading' },
  refusing: { status: 401, error: 'invalid API key' },
  'missing the model': { status: 404, error: 'model "bag-of-words" not found, try pulling it first' },
} as const;

const startEmbedderStandIn = async () => {
  let state: 'up' | keyof typeof FAILURES = 'up';
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (part: Buffer) => (body += part.toString()));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (state !== 'up') {
        res.statusCode = FAILURES[state].status;
        res.end(JSON.stringify({ error: FAILURES[state].error }));
        return;
      }
      const { input } = JSON.parse(body) as { input: string[] };
      res.end(JSON.stringify({ embeddings: input.map(vectorOf) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    set: (next: typeof state) => (state = next),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

const DOCUMENTS = [
  { source_id: 'garage.md', title: 'Garage', body: 'Change the engine oil of the car every ten thousand kilometres.' },
  { source_id: 'kitchen.md', title: 'Kitchen', body: 'Bake the bread at two hundred degrees for forty minutes.' },
];

describe('hybrid search while one of its indexes is unavailable', { timeout: 120_000 }, () => {
  let meili: MeiliStandIn;
  let embedder: Awaited<ReturnType<typeof startEmbedderStandIn>>;
  let ledger: Ledger;

  beforeAll(async () => {
    meili = await startMeiliStandIn('up');
    embedder = await startEmbedderStandIn();
    const config = loadConfig({
      env: {
        CTX_STORAGE__DATA_DIR: tempDataDir(),
        CTX_EMBEDDINGS__PROVIDER: 'http',
        CTX_EMBEDDINGS__API: 'ollama',
        CTX_EMBEDDINGS__URL: embedder.url,
        CTX_EMBEDDINGS__MODEL: 'bag-of-words',
        CTX_SEARCH__KEYWORD_INDEX: 'meilisearch',
        CTX_SEARCH__MEILISEARCH_URL: meili.url,
        CTX_SEARCH__MEILISEARCH_TIMEOUT_MS: '2000',
      },
    });
    ledger = await openLedger(config, { logger: pino({ level: 'silent' }) });
    await ledger.start();
    await ledger.operation('documents.ingest_batch').run({ source: 'notes', documents: DOCUMENTS }, context());
    await ledger.projections.waitFor(await ledger.store.headPosition(), { timeoutMs: 60_000 });
  }, 120_000);

  afterAll(async () => {
    await ledger?.close();
    await meili?.close();
    await embedder?.close();
  });

  const search = (mode: string, query = 'engine oil') =>
    ledger.operation('search').run({ query, mode }, context()) as Promise<SearchOutput>;

  it('answers from both rankings, unflagged, while both are there', async () => {
    const answer = await search('hybrid');
    expect(answer.results[0]?.source_id).toBe('garage.md');
    expect(answer.degraded).toBeUndefined();
  });

  it.each([
    ['down', /^Meilisearch is unavailable/],
    ['refusing', /^Meilisearch refused the configured API key/],
  ] as const)('answers from the semantic ranking, flagged, while Meilisearch is %s', async (mode, why) => {
    await meili.set(mode);
    try {
      const answer = await search('hybrid');
      expect(answer.results[0]?.source_id).toBe('garage.md');
      expect(answer.degraded?.unavailable).toBe('keyword');
      expect(answer.degraded?.reason).toMatch(why);
      // Keyword search alone has nothing to answer from: it says so.
      await expect(search('keyword')).rejects.toThrow(why);
    } finally {
      await meili.set('up');
    }
  });

  it.each([
    ['failing', 'oil of the engine', /503/],
    ['refusing', 'the engine oil change', /refused the configured API key \(HTTP 401: invalid API key\)/],
    ['missing the model', 'oil for the engine', /has no model 'bag-of-words' at \/api\/embed \(HTTP 404: model "bag-of-words" not found/],
  ] as const)('answers from the keyword ranking, flagged, while the embedding server is %s', async (state, query, why) => {
    embedder.set(state);
    try {
      // A query not embedded before: the embedding cache would answer for one that was.
      const answer = await search('hybrid', query);
      expect(answer.results[0]?.source_id).toBe('garage.md');
      expect(answer.degraded?.unavailable).toBe('semantic');
      expect(answer.degraded?.reason).toMatch(why);
      await expect(search('semantic', query)).rejects.toThrow(why);
    } finally {
      embedder.set('up');
    }
  });
});
