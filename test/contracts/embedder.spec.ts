import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'vitest';
import { createHttpEmbedder } from '../../infra/embeddings/httpEmbedder.js';
import { createWorkerEmbedder } from '../../infra/embeddings/workerEmbedder.js';
import { EMBEDDING_MODEL, testModelDir } from '../support/requirements.js';
import { describeEmbedderContract } from './embedder.contract.js';

/**
 * An Ollama-style embedding server: 8-d vectors from each text's bytes, deterministic; 400 for any
 * input to a model whose context it says is too short, as Ollama refuses an input longer than it;
 * 404 for a model it does not have.
 */
const MODEL = 'stand-in-8d';
const TINY_CONTEXT = 'stand-in-tiny-context';

const standInServer = async () => {
  let calls = 0;
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      calls += 1;
      const { model, input } = JSON.parse(body) as { model: string; input: string[] };
      if (model === TINY_CONTEXT) {
        response
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'the input length exceeds the context length' }));
        return;
      }
      if (model !== MODEL) {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `model "${model}" not found` }));
        return;
      }
      const embeddings = input.map((text) => {
        const vector = Array.from({ length: 8 }, () => 1);
        for (const [i, byte] of Buffer.from(text).entries()) vector[i % 8]! += byte;
        return vector;
      });
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ embeddings }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, calls: () => calls, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
};

describeEmbedderContract('HTTP (Ollama API) against a stand-in server', async () => {
  const backend = await standInServer();
  const http = (url: string, model = MODEL) => createHttpEmbedder({ url, model, api: 'ollama', dimensions: 8 });
  // A port nothing listens on: the stand-in's, once it is closed.
  const gone = await standInServer();
  await gone.close();
  return {
    embedder: await http(backend.url),
    backendCalls: backend.calls,
    unreachable: () => http(gone.url),
    refusing: () => http(backend.url, TINY_CONTEXT),
    cleanup: backend.close,
  };
});

if (EMBEDDING_MODEL.available) {
  describeEmbedderContract('local model in worker threads', async () => {
    const embedder = await createWorkerEmbedder({ modelDir: testModelDir! });
    return { embedder, cleanup: () => embedder.close() };
  });
} else {
  describe.skip(`Embedder contract: local model in worker threads (skipped: ${EMBEDDING_MODEL.missing})`, () => {
    it('needs the embedding model');
  });
}
