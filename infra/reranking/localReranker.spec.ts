import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/errors.js';
import { tempDataDir } from '../../test/support/ledger.js';
import { writeTinyCrossEncoder } from '../../test/support/tinyCrossEncoder.js';
import { createLocalReranker, type LocalReranker } from './localReranker.js';

const opened: LocalReranker[] = [];
afterEach(async () => {
  for (const reranker of opened.splice(0)) await reranker.close();
});

const rerankerOver = (model: string, modelDir: string, batchSize?: number) => {
  const reranker = createLocalReranker({ model, modelDir, ...(batchSize ? { batchSize } : {}) });
  opened.push(reranker);
  return reranker;
};

describe('the local cross-encoder reranker', { timeout: 60_000 }, () => {
  it('scores pairs in batches, answering in input order', async () => {
    const modelDir = tempDataDir('ctx-reranker-models-');
    const model = writeTinyCrossEncoder(path.join(modelDir, 'acme', 'one-logit'), { bread: 2, oven: 0.5, fresh: -1 });
    const texts = ['bread', 'a long passage about an oven and bread and more bread', '', 'fresh bread', 'oven', 'nothing'];
    const scores = await rerankerOver('acme/one-logit', modelDir, 2).score('fresh oven', texts);
    expect(scores).toEqual(texts.map((text) => model.logits('fresh oven', text)[0]));
    expect(scores).toEqual([1.5, 4, -0.5, 0.5, 0, -0.5]);
  });

  it("takes the positive class's logit of a model with two labels", async () => {
    const modelDir = tempDataDir('ctx-reranker-models-');
    writeTinyCrossEncoder(path.join(modelDir, 'acme', 'two-labels'), { bread: [5, 1], oven: [-3, 2] }, 'model_quantized.onnx');
    expect(await rerankerOver('acme/two-labels', modelDir).score('query', ['bread', 'oven', 'bread oven'])).toEqual([1, 2, 3]);
  });

  it('refuses a model folder without its files, with an UnavailableError naming them', async () => {
    const modelDir = tempDataDir('ctx-reranker-models-');
    const error = await rerankerOver('acme/absent', modelDir).open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toBe(
      `The local reranker acme/absent cannot be loaded from ${path.join(modelDir, 'acme', 'absent')}: it has no config.json, ` +
        'tokenizer.json, tokenizer_config.json, onnx/model.onnx or onnx/model_quantized.onnx',
    );
  });
});
