import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { rerankerModelDir } from '../../src/modules/rerankerFromConfig.js';
import { ALL_SCOPES, ingest, startApiServer, type ApiServer } from '../api/apiServer.js';
import { ensureBuilt, killServed, runBuilt, serveBuilt } from '../support/builtCli.js';
import { EVERY_TOOLSET, tempDataDir, tempRootsEnv } from '../support/ledger.js';
import { until } from '../support/polling.js';
import { connectMcp } from '../support/mcp.js';
import { writeTinyCrossEncoder } from '../support/tinyCrossEncoder.js';

/** The stand-in cross-encoder's judgement: passages about bread first, then kitchens, then the rest. */
const relevance = (text: string) => (text.includes('bread') ? 0.9 : text.includes('kitchen') ? 0.5 : 0.1);

/** A reranking server speaking TEI's `/rerank` and Cohere/Jina's `/v1/rerank`, up or answering 503. */
const startRerankerStandIn = async () => {
  let state: 'up' | 'failing' | 'refusing' = 'up';
  const seen: { path: string; authorization?: string }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (part: Buffer) => (body += part.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
      res.setHeader('content-type', 'application/json');
      if (state !== 'up') {
        res.statusCode = state === 'failing' ? 503 : 401;
        res.end(JSON.stringify(state === 'failing' ? { error: 'model is loading' } : { message: 'invalid api token' }));
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
    set: (next: typeof state) => (state = next),
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

/** The tool API's search for "notes", in keyword mode, with explain. */
const searchTool = async (api: ApiServer): Promise<Answer> => {
  const response = await fetch(`${api.server.url}/tools/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${api.token(ALL_SCOPES, 'acme')}` },
    body: JSON.stringify({ query: 'notes', mode: 'keyword', explain: true }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Answer;
};

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

  const search = () => searchTool(api);

  it("orders the results by the reranker's scores and shows them in explain", async () => {
    const answer = await search();
    expect(answer.results.map((r) => r.source_id)).toEqual(['bakery.md', 'kitchen.md', 'garage.md']);
    expect(answer.results.map((r) => r.explain?.rerank)).toEqual([0.9, 0.5, 0.1]);
    expect(answer.rerank_notice).toBeUndefined();
    expect(reranker.seen.at(-1)).toEqual({ path, authorization: 'Bearer secret-key' });
  });

  it('answers in fused order, and says so, while the reranker fails', async () => {
    reranker.set('failing');
    try {
      const answer = await search();
      expect(answer.results[0]?.source_id).toBe('garage.md');
      expect(answer.results.every((r) => r.explain?.rerank === undefined)).toBe(true);
      expect(answer.rerank_notice).toMatch(/fused order: The reranker at .* answered 503/);
    } finally {
      reranker.set('up');
    }
  });

  it('answers in fused order while the reranker refuses the key, naming the setting to mend', async () => {
    reranker.set('refusing');
    try {
      const answer = await search();
      expect(answer.results[0]?.source_id).toBe('garage.md');
      expect(answer.rerank_notice).toBe(
        `Results are in fused order: The reranker at ${reranker.url} refused the configured API key ` +
          '(HTTP 401: invalid api token). Set reranker.api_key to a key it accepts',
      );
    } finally {
      reranker.set('up');
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
    expect(rerankerModelDir(local)).toBe(join('/opt/models', 'reranker'));
    const elsewhere = loadConfig({ env: { CTX_RERANKER__PROVIDER: 'local', CTX_RERANKER__MODEL_DIR: '/srv/cross-encoders' } });
    expect(rerankerModelDir(elsewhere)).toBe('/srv/cross-encoders');
  });
});

const MODEL = 'acme/tiny-cross-encoder';

/** The model's judgement: a passage's logit is the sum of its words' weights. */
const WEIGHTS = { bread: 2.5, oven: 1.25, notes: 0 };

const localEnv = (modelDir: string, model = MODEL) => ({
  CTX_RERANKER__PROVIDER: 'local',
  CTX_RERANKER__MODEL: model,
  CTX_RERANKER__MODEL_DIR: modelDir,
});

describe('search reordered by a local ONNX cross-encoder', { timeout: 120_000 }, () => {
  let api: ApiServer;
  let model: ReturnType<typeof writeTinyCrossEncoder>;

  beforeAll(async () => {
    const modelDir = tempDataDir('ctx-reranker-models-');
    model = writeTinyCrossEncoder(join(modelDir, MODEL), WEIGHTS);
    api = await startApiServer(localEnv(modelDir));
    await ingest(api, 'acme', DOCUMENTS);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
  });

  it("orders the tool API's results by the model's logits and shows them in explain", async () => {
    const answer = await searchTool(api);
    expect(answer.rerank_notice).toBeUndefined();
    expect(answer.results.map((r) => r.source_id)).toEqual(['bakery.md', 'kitchen.md', 'garage.md']);
    expect(answer.results.map((r) => r.explain?.rerank)).toEqual([2.5, 1.25, 0]);
    // What the model computes for the pair: the test's own reading of the passages agrees.
    expect(model.logits('notes', DOCUMENTS[2]!.body)).toEqual([2.5]);
  });

  it("orders REST /api/v1/search by the model and gives each result's score", async () => {
    const response = await api.call('POST', '/search', { token: api.token(ALL_SCOPES, 'acme'), body: { query: 'notes' } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const results = response.body.results as { metadata: { path: string; rerank_score?: number } }[];
    expect(results.map((r) => r.metadata.path)).toEqual(['bakery.md', 'kitchen.md', 'garage.md']);
    expect(results.map((r) => r.metadata.rerank_score)).toEqual([2.5, 1.25, 0]);
    expect(response.body.query_metadata).not.toHaveProperty('rerank_notice');
  });

  it("turns reranking off and on again for one tenant through PATCH /config's search.enable_reranking", async () => {
    const token = api.token(ALL_SCOPES, 'acme');
    const reranking = async () => ((await api.call('GET', '/config', { token })).body.search as { enable_reranking: boolean }).enable_reranking;
    const patch = (on: boolean) => api.call('PATCH', '/config', { token, body: { search: { enable_reranking: on } } });
    expect(await reranking()).toBe(true);
    try {
      expect((await patch(false)).status).toBe(200);
      expect(await reranking()).toBe(false);
      const fused = await searchTool(api);
      expect(fused.results.every((r) => r.explain?.rerank === undefined)).toBe(true);
      expect(fused.results[0]?.source_id).toBe('garage.md');
      // Another tenant keeps its own setting.
      const other = await api.call('GET', '/config', { token: api.token(ALL_SCOPES, 'globex') });
      expect((other.body.search as { enable_reranking: boolean }).enable_reranking).toBe(true);
    } finally {
      expect((await patch(true)).status).toBe(200);
    }
    expect((await searchTool(api)).results.map((r) => r.explain?.rerank)).toEqual([2.5, 1.25, 0]);
  });
});

describe('a local cross-encoder whose folder cannot be used', { timeout: 120_000 }, () => {
  let api: ApiServer;
  let modelDir: string;

  beforeAll(async () => {
    modelDir = tempDataDir('ctx-reranker-models-');
    api = await startApiServer(localEnv(modelDir));
    await ingest(api, 'acme', DOCUMENTS);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
  });

  it('answers in fused order with a notice saying the model files are missing, on every surface', async () => {
    const answer = await searchTool(api);
    expect(answer.results[0]?.source_id).toBe('garage.md');
    expect(answer.results.every((r) => r.explain?.rerank === undefined)).toBe(true);
    expect(answer.rerank_notice).toBe(
      `Results are in fused order: The local reranker ${MODEL} cannot be loaded from ${join(modelDir, MODEL)}: ` +
        'it has no config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx or onnx/model_quantized.onnx',
    );
    const rest = await api.call('POST', '/search', { token: api.token(ALL_SCOPES, 'acme'), body: { query: 'notes' } });
    expect(rest.status).toBe(200);
    expect((rest.body.query_metadata as { rerank_notice?: string }).rerank_notice).toBe(answer.rerank_notice);
    expect((rest.body.results as { metadata: object }[])[0]?.metadata).not.toHaveProperty('rerank_score');

    const mcp = await connectMcp(api.server.url, { authorization: `Bearer ${api.token(ALL_SCOPES, 'acme')}` });
    try {
      for (const [tool, args] of [
        ['context.search', { query: 'notes', mode: 'keyword' }],
        ['context.search', { query: 'notes' }],
      ] as const) {
        const result = await mcp.callTool({ name: tool, arguments: args });
        expect(result.isError, `${tool}: ${JSON.stringify(result.content)}`).toBeFalsy();
        const structured = result.structuredContent as { rerank_notice?: string; query_metadata?: { rerank_notice?: string } };
        expect(structured.rerank_notice ?? structured.query_metadata?.rerank_notice, tool).toBe(answer.rerank_notice);
        expect((result.content[0] as { text: string }).text, tool).toContain(answer.rerank_notice);
      }
    } finally {
      await mcp.close();
    }
  });

  it('says why weights that do not load cannot be used, then reranks once a working model is put there', async () => {
    const folder = join(modelDir, MODEL);
    writeTinyCrossEncoder(folder, WEIGHTS);
    writeFileSync(join(folder, 'onnx', 'model.onnx'), 'not an ONNX model');
    const broken = await searchTool(api);
    expect(broken.results[0]?.source_id).toBe('garage.md');
    expect(broken.rerank_notice).toMatch(
      new RegExp(`^Results are in fused order: The local reranker ${MODEL} cannot be loaded from .*: cannot load its weights: `),
    );

    writeTinyCrossEncoder(folder, WEIGHTS);
    const fixed = await searchTool(api);
    expect(fixed.rerank_notice).toBeUndefined();
    expect(fixed.results.map((r) => r.explain?.rerank)).toEqual([2.5, 1.25, 0]);
  });
});

describe('ctx serve with a local reranker', { timeout: 300_000 }, () => {
  beforeAll(ensureBuilt, 300_000);
  afterAll(killServed);

  const env = (modelDir: string) => ({
    CTX_EMBEDDINGS__PROVIDER: 'none',
    ...localEnv(modelDir),
    ...EVERY_TOOLSET,
    ...tempRootsEnv(),
  });
  const serve = (modelDir: string, dataDir = tempDataDir('ctx-reranker-serve-')) =>
    serveBuilt(['--data-dir', dataDir, '--bind', '127.0.0.1:0'], { env: env(modelDir) });

  it('warns at start when the model folder cannot be used, saying what to do', async () => {
    const modelDir = tempDataDir('ctx-reranker-models-');
    const server = await serve(modelDir);
    const output = await until(server.output, (out) => out.includes('reranking is off'), { what: 'the warning' });
    expect(output).toContain(
      `reranking is off: The local reranker ${MODEL} cannot be loaded from ${join(modelDir, MODEL)}: it has no config.json`,
    );
    expect(output).toContain(`Run \`ctx model fetch --reranker ${MODEL}\``);
  });

  it('reranks the built `ctx search` and `ctx serve` with the model, and ctx search says when it cannot', async () => {
    const modelDir = tempDataDir('ctx-reranker-models-');
    writeTinyCrossEncoder(join(modelDir, MODEL), WEIGHTS);
    const root = tempDataDir('ctx-reranker-docs-');
    for (const doc of DOCUMENTS) writeFileSync(join(root, doc.source_id), `${doc.body}\n`);
    const dataDir = tempDataDir('ctx-reranker-serve-');
    const ingested = await runBuilt(['ingest', root, '--data-dir', dataDir], { env: env(modelDir) });
    expect(ingested.code, ingested.stderr).toBe(0);
    const cli = await runBuilt(['search', 'notes', '--mode', 'keyword', '--explain', '--data-dir', dataDir], {
      env: env(modelDir),
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/^1\. bakery\.md .*\n.*\n {3}keyword #\d .*; reranker score 2\.500; shown: chunk /m);
    expect(cli.stdout).not.toContain('Note:');
    const broken = await runBuilt(['search', 'notes', '--mode', 'keyword', '--data-dir', dataDir], {
      env: env(tempDataDir('ctx-reranker-models-')),
    });
    expect(broken.stdout).toMatch(/^1\. garage\.md /m);
    expect(broken.stdout).toContain(`Note: Results are in fused order: The local reranker ${MODEL} cannot be loaded from`);

    const server = await serve(modelDir, dataDir);
    const output = await until(server.output, (out) => /reranker: |reranking is off/.test(out), { what: 'the reranker log' });
    expect(output).toContain(`reranker: ${MODEL} from ${join(modelDir, MODEL)}`);
    const post = (tool: string, body: unknown) =>
      fetch(`${server.url}/tools/${tool}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const answer = await until(
      async () => (await (await post('search', { query: 'notes', mode: 'keyword', explain: true })).json()) as Answer,
      (a) => a.results.length === 3,
      { what: 'three results' },
    );
    expect(answer.rerank_notice).toBeUndefined();
    expect(answer.results.map((r) => basename(r.source_id))).toEqual(['bakery.md', 'kitchen.md', 'garage.md']);
    expect(answer.results.map((r) => r.explain?.rerank)).toEqual([2.5, 1.25, 0]);
  });
});
