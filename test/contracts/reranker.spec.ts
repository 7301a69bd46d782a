import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createHttpReranker } from '../../infra/reranking/httpReranker.js';
import { createLocalReranker, type LocalReranker } from '../../infra/reranking/localReranker.js';
import { tempDataDir } from '../support/ledger.js';
import { writeTinyCrossEncoder } from '../support/tinyCrossEncoder.js';
import { describeRerankerContract } from './reranker.contract.js';

/** A TEI-style `/rerank` server: passages about bread first, then kitchens, then the rest. */
const standInServer = async () => {
  let calls = 0;
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      calls += 1;
      const { texts } = JSON.parse(body) as { texts: string[] };
      const relevance = (text: string) => (text.includes('bread') ? 0.9 : text.includes('kitchen') ? 0.5 : 0.1);
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(texts.map((text, index) => ({ index, score: relevance(text) }))));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, calls: () => calls, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
};

describeRerankerContract('HTTP (TEI API) against a stand-in server', async () => {
  const backend = await standInServer();
  const http = (url: string) => createHttpReranker({ api: 'tei', url, model: 'stand-in', timeoutMs: 5_000 });
  // A port nothing listens on: the stand-in's, once it is closed.
  const gone = await standInServer();
  await gone.close();
  return { reranker: http(backend.url), backendCalls: backend.calls, unavailable: () => http(gone.url), cleanup: backend.close };
});

describeRerankerContract('local ONNX cross-encoder in a worker thread', () => {
  const modelDir = tempDataDir('ctx-reranker-models-');
  writeTinyCrossEncoder(path.join(modelDir, 'acme', 'tiny'), { bread: 2, kitchen: 1, bake: 0.5 });
  const made: LocalReranker[] = [];
  const local = (model: string) => {
    const reranker = createLocalReranker({ model, modelDir });
    made.push(reranker);
    return reranker;
  };
  return Promise.resolve({
    reranker: local('acme/tiny'),
    unavailable: () => local('acme/absent'),
    cleanup: async () => {
      for (const reranker of made) await reranker.close();
    },
  });
});
