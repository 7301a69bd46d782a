/**
 * Throughput of the local embedder on full-length passages and the latency of one query.
 * Usage: `ctx model fetch`, then npm run bench -- localEmbedder
 * (CTX_EMBEDDINGS__MODEL_DIR names another model folder than ~/.cache/context-ledger/models).
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_MODEL_DIR } from '../src/config.js';
import { createLocalEmbedder } from '../infra/embeddings/localEmbedder.js';

const modelDir = process.env.CTX_EMBEDDINGS__MODEL_DIR || DEFAULT_MODEL_DIR;
const passageCount = Number(process.env.BENCH_PASSAGES ?? 256);
const batchSize = 32;

const words = (
  'event store projection stream revision subscription query index vector embedding search ranking ' +
  'document chunk connector ingestion annotation snapshot replay position checkpoint tenant agent ' +
  'context memory retrieval keyword semantic hybrid fusion cache model tokenizer passage sentence'
).split(' ');
// Every passage differs and is long enough to be truncated at the model's 256 tokens.
const passage = (seed: number): string =>
  Array.from({ length: 300 }, (_, i) => words[(seed * 7919 + i * i * 31 + i) % words.length]).join(' ');

export const run = async (): Promise<void> => {
  const embedder = await createLocalEmbedder({ modelDir, batchSize });
  await embedder.embed([passage(-1)], 'document'); // loads the model

  const passages = Array.from({ length: passageCount }, (_, i) => passage(i));
  const start = performance.now();
  await embedder.embed(passages, 'document');
  const seconds = (performance.now() - start) / 1000;

  const latencies: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    await embedder.embed([`how is a ${words[i % words.length]} rebuilt after a crash ${i}`], 'query');
    latencies.push(performance.now() - t0);
  }
  latencies.sort((a, b) => a - b);
  await embedder.close();

  console.log(
    JSON.stringify({
      model: embedder.model,
      dimensions: embedder.dimensions,
      passages: passageCount,
      tokensPerPassage: 256,
      batchSize,
      passagesPerSecond: Number((passageCount / seconds).toFixed(1)),
      queryLatencyMsMedian: Number(latencies[latencies.length >> 1]!.toFixed(1)),
    }),
  );
};
