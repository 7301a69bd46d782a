import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyError, CredentialsRefusedError, isLastingOutage, UnavailableError, ValidationError } from '../../src/errors.js';
import type { Embedder, EmbeddingCache, EmbeddingKind } from '../../src/ports/embedder.js';
import { openPglite } from '../postgres/database.js';
import type { Database } from '../postgres/database.js';
import { contentHash, EMBEDDING_SLICE, withEmbeddingCache } from './cachedEmbedder.js';
import { createHttpEmbedder } from './httpEmbedder.js';
import { createLocalEmbedder, DEFAULT_LOCAL_MODEL, type LocalEmbedderOptions } from './localEmbedder.js';
import { describeWith, EMBEDDING_MODEL, EMBEDDING_MODEL_INT8, itWith, testModelDir } from '../../test/support/requirements.js';
import { createMemoryEmbeddingCache } from './memoryEmbeddingCache.js';
import { lengthBatches } from './vectors.js';
import { createPostgresEmbeddingCache } from './postgresEmbeddingCache.js';

const dot = (a: Float32Array, b: Float32Array): number => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const norm = (v: Float32Array): number => Math.sqrt(dot(v, v));

/** A stand-in backend: deterministic 8-d vectors from the text's bytes; it counts what it is asked. */
const createCountingEmbedder = () => {
  const calls: { texts: string[]; kind: EmbeddingKind }[] = [];
  const embedder: Embedder = {
    model: 'counting-8d',
    dimensions: 8,
    embed(texts, kind) {
      calls.push({ texts: [...texts], kind });
      return Promise.resolve(
        texts.map((text) => {
          const vector = new Float32Array(8);
          for (const [i, byte] of Buffer.from(`${kind}:${text}`).entries()) vector[i % 8]! += byte;
          return vector.map((x) => x / norm(vector));
        }),
      );
    },
    close: () => Promise.resolve(),
  };
  return { embedder, calls };
};

describeWith(EMBEDDING_MODEL, 'local embedder', () => {
  const modelFolder = join(testModelDir!, DEFAULT_LOCAL_MODEL);
  const local = (options: Partial<LocalEmbedderOptions> = {}) =>
    createLocalEmbedder({ modelDir: testModelDir!, ...options });
  let embedder: Embedder;
  beforeAll(async () => {
    embedder = await local();
  });
  afterAll(() => embedder.close());

  it('embeds each text into one unit-length vector of the model dimensions', async () => {
    const vectors = await embedder.embed(
      ['The quick brown fox.', 'Event sourcing keeps every change.'],
      'document',
    );
    expect(embedder.dimensions).toBe(384);
    expect(vectors).toHaveLength(2);
    for (const vector of vectors) {
      expect(vector).toHaveLength(384);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
  });

  it('places similar sentences closer than unrelated ones', async () => {
    const [cat, kitten, revenue] = await embedder.embed(
      [
        'A cat is sleeping on the sofa.',
        'A kitten naps on the couch.',
        'Quarterly revenue grew by five percent.',
      ],
      'document',
    );
    expect(dot(cat!, kitten!)).toBeGreaterThan(dot(cat!, revenue!) + 0.3);
  });

  it('finds the passage that answers a query', async () => {
    const [query] = await embedder.embed(['how do I roll back a database migration'], 'query');
    const passages = await embedder.embed(
      [
        'To undo the last schema migration, run migrate down with the previous version number.',
        'The office kitchen is cleaned every Friday afternoon.',
        'Our logo uses a deep blue colour inspired by the sea.',
      ],
      'document',
    );
    const scores = passages.map((passage) => dot(query!, passage));
    expect(scores.indexOf(Math.max(...scores))).toBe(0);
  });

  it('gives the same vector for the same text, in input order whatever the batching', async () => {
    const texts = [
      'short',
      'a somewhat longer sentence about search engines',
      'mid length text',
      'x',
      'short',
    ];
    const smallBatches = await local({ batchSize: 2 });
    const batched = await smallBatches.embed(texts, 'document');
    await smallBatches.close();
    const oneByOne = await Promise.all(
      texts.map(async (text) => (await embedder.embed([text], 'document'))[0]!),
    );
    // Padding to the longest text of a batch moves int8 models a hair; never further than this.
    batched.forEach((vector, i) => expect(dot(vector, oneByOne[i]!)).toBeGreaterThan(0.99));
    expect(dot(batched[0]!, batched[4]!)).toBeGreaterThan(0.99);
  });

  it('puts the query prefix before queries only', async () => {
    const prefixed = await local({ queryPrefix: 'search_query: ' });
    const [asQuery] = await prefixed.embed(['event store'], 'query');
    const [asDocument] = await prefixed.embed(['event store'], 'document');
    const [byHand] = await embedder.embed(['search_query: event store'], 'document');
    expect(dot(asQuery!, byHand!)).toBeCloseTo(1, 5);
    expect(dot(asQuery!, asDocument!)).toBeLessThan(0.999);
    await prefixed.close();
  });

  it('pools as the model folder declares unless told otherwise', async () => {
    const declaresCls = readFileSync(join(modelFolder, '1_Pooling', 'config.json'), 'utf8').includes(
      '"pooling_mode_cls_token": true',
    );
    const other = await local({ pooling: declaresCls ? 'mean' : 'cls' });
    const [declared] = await embedder.embed(['pooling decides the vector'], 'document');
    const [otherPooled] = await other.embed(['pooling decides the vector'], 'document');
    expect(dot(declared!, otherPooled!)).toBeLessThan(0.99);
    await other.close();
  });

  itWith(
    { ...EMBEDDING_MODEL_INT8, available: EMBEDDING_MODEL_INT8.available && existsSync(join(modelFolder, 'onnx', 'model.onnx')) },
    'runs the fp32 weights by default and names the int8 ones apart, as a vector space of their own',
    async () => {
      const int8 = await local({ dtype: 'q8' });
      expect(embedder.model).toBe(DEFAULT_LOCAL_MODEL);
      expect(int8.model).toBe(`${DEFAULT_LOCAL_MODEL}@q8`);
      const text = 'Event sourcing keeps every change as an event.';
      const [full] = await embedder.embed([text], 'document');
      const [quantised] = await int8.embed([text], 'document');
      // Close, as an int8 export of the same model is, yet not the same vector.
      expect(dot(full!, quantised!)).toBeGreaterThan(0.9);
      expect(dot(full!, quantised!)).toBeLessThan(0.9999);
      await int8.close();
    },
  );
});

describe('local embedder without its files', () => {
  it('names the folder it looked in', async () => {
    const modelDir = mkdtempSync(join(tmpdir(), 'ctx-no-model-'));
    const error = await createLocalEmbedder({ model: 'acme/absent', modelDir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe(`no model files in ${join(modelDir, 'acme', 'absent')}`);
  });
});

/** Emulates OpenAI's /v1/embeddings and Ollama's /api/embed with unnormalised 3-d vectors. */
const startFakeEmbeddingServer = async () => {
  const requests: { path: string; authorization?: string; body: { model: string; input: string[] } }[] = [];
  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const body = JSON.parse(raw) as { model: string; input: string[] };
    requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
    const ollama = req.url === '/api/embed';
    if (!ollama && req.url !== '/v1/embeddings') return answer(res, 404, { error: 'no such route' });
    if (body.model === 'missing-model') {
      return answer(
        res,
        ollama ? 404 : 400,
        ollama
          ? { error: `model "${body.model}" not found, try pulling it first` }
          : { error: { message: 'The model `missing-model` does not exist' } },
      );
    }
    if (req.headers.authorization === 'Bearer sk-revoked') {
      return answer(res, 401, { error: { message: 'Incorrect API key provided: sk-revo*****' } });
    }
    if (body.model === 'overloaded') return answer(res, 503, { error: 'server overloaded' });
    if (body.model === 'silent') return; // never answers
    const vectors = body.input.map((text) => [text.length, 2, 1]);
    if (ollama) return answer(res, 200, { model: body.model, embeddings: vectors });
    // OpenAI lists items with their index; the order is not promised.
    const data = vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })).reverse();
    return answer(res, 200, { object: 'list', data, model: body.model });
  };
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const stop = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url, requests, stop };
};

describe('HTTP embedder', () => {
  let server: Awaited<ReturnType<typeof startFakeEmbeddingServer>>;
  beforeAll(async () => {
    server = await startFakeEmbeddingServer();
  });
  afterAll(() => server.stop());

  it.each(['openai', 'ollama'] as const)(
    'embeds through the %s API with normalised vectors in input order',
    async (api) => {
      const embedder = await createHttpEmbedder({
        url: server.url,
        model: 'nomic-embed-text',
        api,
        dimensions: 3,
      });
      const vectors = await embedder.embed(['ab', 'abcd'], 'document');
      expect(vectors.map((v) => Array.from(v))).toEqual([
        Array.from(new Float32Array([2 / 3, 2 / 3, 1 / 3])),
        Array.from(new Float32Array([4 / Math.sqrt(21), 2 / Math.sqrt(21), 1 / Math.sqrt(21)])),
      ]);
      expect(server.requests.at(-1)).toMatchObject({
        path: api === 'openai' ? '/v1/embeddings' : '/api/embed',
        body: { model: 'nomic-embed-text', input: ['ab', 'abcd'] },
      });
    },
  );

  it('sends the API key as a bearer token and accepts a base URL ending in /v1', async () => {
    const embedder = await createHttpEmbedder({
      url: `${server.url}/v1`,
      model: 'm',
      api: 'openai',
      apiKey: 'sk-test',
      dimensions: 3,
    });
    await embedder.embed(['x'], 'document');
    expect(server.requests.at(-1)).toMatchObject({ path: '/v1/embeddings', authorization: 'Bearer sk-test' });
  });

  it('learns the dimensions from one probe when not told', async () => {
    const embedder = await createHttpEmbedder({ url: server.url, model: 'm', api: 'ollama' });
    expect(embedder.dimensions).toBe(3);
  });

  it('splits large inputs into batches and applies instruction prefixes by kind', async () => {
    const embedder = await createHttpEmbedder({
      url: server.url,
      model: 'm',
      api: 'ollama',
      dimensions: 3,
      batchSize: 2,
      queryPrefix: 'search_query: ',
      documentPrefix: 'search_document: ',
    });
    const before = server.requests.length;
    expect(await embedder.embed(['a', 'b', 'c'], 'document')).toHaveLength(3);
    await embedder.embed(['q'], 'query');
    expect(server.requests.slice(before).map((r) => r.body.input)).toEqual([
      ['search_document: a', 'search_document: b'],
      ['search_document: c'],
      ['search_query: q'],
    ]);
  });

  it('turns a 4xx into a ValidationError with the server message', async () => {
    // This OpenAI-compatible stand-in answers 400 for a model it does not have, as some do.
    const embedder = await createHttpEmbedder({ url: server.url, model: 'missing-model', api: 'openai', dimensions: 3 });
    const error = await embedder.embed(['x'], 'document').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/missing-model/);
  });

  it('turns a 404 into the model or address to mend, an outage no retry mends', async () => {
    const ollama = await createHttpEmbedder({ url: server.url, model: 'missing-model', api: 'ollama', dimensions: 3 });
    const missing = await ollama.embed(['x'], 'document').catch((e: unknown) => e);
    expect(isLastingOutage(missing)).toBe(true);
    expect(classifyError(missing)).toMatchObject({ code: 'CONFIG_ERROR', expected: true });
    expect((missing as Error).message).toBe(
      `Embedding server ${server.url} has no model 'missing-model' at /api/embed (HTTP 404: model "missing-model" not ` +
        'found, try pulling it first). Set embeddings.model to a model it serves and embeddings.url to its address, ' +
        'or pull the model there (ollama pull missing-model)',
    );
    // A URL that is not the server's API root: the route is missing, not the model.
    const elsewhere = await createHttpEmbedder({ url: `${server.url}/other`, model: 'm', api: 'openai', dimensions: 3 });
    const route = await elsewhere.embed(['x'], 'query').catch((e: unknown) => e);
    expect(isLastingOutage(route)).toBe(true);
    expect((route as Error).message).toMatch(/^Embedding server .* has no model 'm' at \/other\/v1\/embeddings \(HTTP 404: no such route\)/);
  });

  it('turns a refused API key into the configuration to mend, naming the setting', async () => {
    const embedder = await createHttpEmbedder({ url: server.url, model: 'm', api: 'openai', apiKey: 'sk-revoked', dimensions: 3 });
    const error = await embedder.embed(['x'], 'query').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CredentialsRefusedError);
    expect(classifyError(error)).toMatchObject({ code: 'CONFIG_ERROR', expected: true });
    expect((error as Error).message).toBe(
      `Embedding server ${server.url} refused the configured API key (HTTP 401: Incorrect API key provided: sk-revo*****). ` +
        'Set embeddings.api_key to a key it accepts',
    );
  });

  it('turns a 5xx into an UnavailableError', async () => {
    const embedder = await createHttpEmbedder({
      url: server.url,
      model: 'overloaded',
      api: 'openai',
      dimensions: 3,
    });
    await expect(embedder.embed(['x'], 'document')).rejects.toThrow(UnavailableError);
  });

  it('gives up on a silent server after the timeout with an UnavailableError', async () => {
    const embedder = await createHttpEmbedder({
      url: server.url,
      model: 'silent',
      api: 'ollama',
      dimensions: 3,
      timeoutMs: 200,
    });
    await expect(embedder.embed(['x'], 'document')).rejects.toThrow(UnavailableError);
  });

  it('ends a request still unanswered when it is closed, whatever its timeout: a stopping process does not wait', async () => {
    const embedder = await createHttpEmbedder({
      url: server.url,
      model: 'silent',
      api: 'ollama',
      dimensions: 3,
      timeoutMs: 600_000,
    });
    const before = server.requests.length;
    const embedding = embedder.embed(['x'], 'document');
    while (server.requests.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
    await embedder.close();
    await expect(embedding).rejects.toThrow('The embedder is closing');
  });

  it('reports an unreachable server as UnavailableError', async () => {
    const closed = await startFakeEmbeddingServer();
    await closed.stop();
    const embedder = await createHttpEmbedder({ url: closed.url, model: 'm', api: 'ollama', dimensions: 3 });
    await expect(embedder.embed(['x'], 'document')).rejects.toThrow(UnavailableError);
    await expect(createHttpEmbedder({ url: closed.url, model: 'm', api: 'openai' })).rejects.toThrow(
      UnavailableError,
    );
  });

  it('does not call the server for no texts', async () => {
    const embedder = await createHttpEmbedder({ url: server.url, model: 'm', api: 'ollama', dimensions: 3 });
    const before = server.requests.length;
    expect(await embedder.embed([], 'query')).toEqual([]);
    expect(server.requests.length).toBe(before);
  });
});

describe('batches of the local model', () => {
  it('groups texts shortest first, within a count and a padded length, and every text once', () => {
    const lengths = [900, 10, 500, 20, 3000, 30, 480];
    const batches = lengthBatches(lengths, 3, 1000);
    expect(batches).toEqual([[1, 3, 5], [6, 2], [0], [4]]);
    for (const batch of batches.filter((b) => b.length > 1))
      expect(batch.length * Math.max(...batch.map((i) => lengths[i]!))).toBeLessThanOrEqual(1000);
  });
});

describe('embedding cache decorator', () => {
  it('embeds nothing the second time it sees the same texts', async () => {
    const { embedder, calls } = createCountingEmbedder();
    const cached = withEmbeddingCache(embedder, createMemoryEmbeddingCache());
    const first = await cached.embed(['alpha', 'beta'], 'document');
    const second = await cached.embed(['beta', 'alpha'], 'document');
    expect(calls).toHaveLength(1);
    expect(second).toEqual([first[1], first[0]]);
  });

  it('embeds only the misses, each distinct text once, in one batch', async () => {
    const { embedder, calls } = createCountingEmbedder();
    const cached = withEmbeddingCache(embedder, createMemoryEmbeddingCache());
    await cached.embed(['alpha'], 'document');
    const vectors = await cached.embed(['gamma', 'alpha', 'delta', 'gamma'], 'document');
    expect(calls.map((call) => call.texts)).toEqual([['alpha'], ['gamma', 'delta']]);
    expect(vectors[0]).toEqual(vectors[3]);
    expect(vectors[1]).toEqual((await embedder.embed(['alpha'], 'document'))[0]);
  });

  it('keeps the vectors of the slices embedded before an outage, and embeds only the rest on retry', async () => {
    const { embedder, calls } = createCountingEmbedder();
    let answered = 0;
    const failingAfterOneSlice: Embedder = {
      ...embedder,
      embed: (texts, kind) =>
        answered++ === 0 ? embedder.embed(texts, kind) : Promise.reject(new UnavailableError('backend gone')),
    };
    const cache = createMemoryEmbeddingCache();
    const texts = Array.from({ length: EMBEDDING_SLICE + 10 }, (_, i) => `passage ${i}`);
    await expect(withEmbeddingCache(failingAfterOneSlice, cache).embed(texts, 'document')).rejects.toThrow(UnavailableError);
    expect(calls.map((call) => call.texts.length)).toEqual([EMBEDDING_SLICE]);

    const vectors = await withEmbeddingCache(embedder, cache).embed(texts, 'document');
    expect(calls.map((call) => call.texts)).toEqual([texts.slice(0, EMBEDDING_SLICE), texts.slice(EMBEDDING_SLICE)]);
    expect(vectors).toEqual(await embedder.embed(texts, 'document'));
  });

  it('keeps query and document vectors of the same text apart', async () => {
    const { embedder, calls } = createCountingEmbedder();
    const cached = withEmbeddingCache(embedder, createMemoryEmbeddingCache());
    const [asDocument] = await cached.embed(['alpha'], 'document');
    const [asQuery] = await cached.embed(['alpha'], 'query');
    expect(calls).toHaveLength(2);
    expect(asQuery).not.toEqual(asDocument);
  });

  it('keeps query vectors out of the document cache, and embeds a repeated query once', async () => {
    const { embedder, calls } = createCountingEmbedder();
    const documents = createMemoryEmbeddingCache();
    const asked: string[] = [];
    const watched: EmbeddingCache = {
      get: (model, hashes) => (asked.push(model), documents.get(model, hashes)),
      put: (model, entries) => (asked.push(model), documents.put(model, entries)),
    };
    const cached = withEmbeddingCache(embedder, watched);
    await cached.embed(['how are tokens refreshed'], 'query');
    await cached.embed(['how are tokens refreshed'], 'query');
    expect(calls).toHaveLength(1);
    expect(asked).toEqual([]);
    await cached.embed(['a passage'], 'document');
    expect(asked).toEqual([embedder.model, embedder.model]);
  });

  it('forgets the least recently used vectors beyond its capacity', async () => {
    const cache = createMemoryEmbeddingCache({ maxEntries: 2 });
    const v = new Float32Array([1]);
    await cache.put(
      'm',
      new Map([
        ['a', v],
        ['b', v],
      ]),
    );
    await cache.get('m', ['a']);
    await cache.put('m', new Map([['c', v]]));
    expect([...(await cache.get('m', ['a', 'b', 'c'])).keys()].sort()).toEqual(['a', 'c']);
  });
});

describe('Postgres embedding cache on PGlite', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openPglite();
  });
  afterAll(() => db.close());

  it('returns exactly the vectors it stored, per model, and nothing for unknown hashes', async () => {
    const cache = await createPostgresEmbeddingCache(db);
    const vector = Float32Array.from({ length: 384 }, (_, i) => Math.sin(i) / 7);
    const hash = contentHash('some chunk text');
    await cache.put('model-a', new Map([[hash, vector]]));
    await cache.put('model-a', new Map([[hash, vector]]));

    const found = await cache.get('model-a', [hash, contentHash('never stored')]);
    expect([...found.keys()]).toEqual([hash]);
    expect(found.get(hash)).toEqual(vector);
    expect((await cache.get('model-b', [hash])).size).toBe(0);
  });

  it('survives being opened again on the same database', async () => {
    const [first, second] = [await createPostgresEmbeddingCache(db), await createPostgresEmbeddingCache(db)];
    await first.put('model-c', new Map([['h', new Float32Array([0.5, -0.25])]]));
    expect((await second.get('model-c', ['h'])).get('h')).toEqual(new Float32Array([0.5, -0.25]));
  });

  it('lets the decorator skip texts embedded in an earlier run', async () => {
    const earlier = createCountingEmbedder();
    await withEmbeddingCache(earlier.embedder, await createPostgresEmbeddingCache(db)).embed(
      ['one', 'two'],
      'document',
    );
    const later = createCountingEmbedder();
    const vectors = await withEmbeddingCache(later.embedder, await createPostgresEmbeddingCache(db)).embed(
      ['two', 'three', 'one'],
      'document',
    );
    expect(later.calls.map((call) => call.texts)).toEqual([['three']]);
    expect(vectors[0]).toEqual((await earlier.embedder.embed(['two'], 'document'))[0]);
  });
});
