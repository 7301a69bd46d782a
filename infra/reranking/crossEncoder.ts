import { join } from 'node:path';
import { AutoModelForSequenceClassification, AutoTokenizer, env } from '@huggingface/transformers';
import type { DataType, Tensor } from '@huggingface/transformers';
import { UnavailableError } from '../../src/errors.js';
import { onnxDtypeIn } from '../embeddings/localEmbedder.js';
import { lengthBatches } from '../embeddings/vectors.js';

export interface CrossEncoderOptions {
  /** A model id: its folder under `modelDir` (a Hugging Face repository name, such as `Xenova/ms-marco-MiniLM-L-6-v2`). */
  model: string;
  /** Folder holding `<model>/`, as `ctx model fetch --reranker` arranges it; nothing is downloaded. */
  modelDir: string;
  /** Pairs per forward pass, at most. */
  batchSize?: number;
  /** ONNX weights to run; defaults to what the folder holds (fp32 `model.onnx` over `model_quantized.onnx`). */
  dtype?: DataType;
  /** Threads ONNX Runtime uses within one forward pass; its default is one per core. */
  intraOpThreads?: number;
}

export interface CrossEncoder {
  /** One score per passage, in input order: the model's logit, or its positive class's when it has two. */
  score(query: string, passages: readonly string[]): Promise<number[]>;
  close(): Promise<void>;
}

/** About 512 tokens of text per pair: a cross-encoder reads no more of a passage. */
const PAIR_CHARS = 2048;
/** Characters per forward pass, counting each pair as long as the longest it is padded to. */
const BATCH_CHARS = 4 * PAIR_CHARS;

const failure = (what: string, cause: unknown) =>
  new UnavailableError(`${what}: ${(cause as Error).message}`, { cause });

/**
 * A sequence-classification cross-encoder run through transformers.js (ONNX Runtime) from a local
 * folder: tokenizer.json, config.json and onnx/model.onnx or onnx/model_quantized.onnx. It is
 * loaded and tried on one pair before it is handed out, so a broken folder is found at once.
 * transformers.js keeps its model path per process: run one in a thread of its own.
 */
export const loadCrossEncoder = async (options: CrossEncoderOptions): Promise<CrossEncoder> => {
  const { model } = options;
  const batchSize = options.batchSize ?? 16;
  env.allowRemoteModels = false;
  env.localModelPath = options.modelDir;
  const dtype = options.dtype ?? onnxDtypeIn(join(options.modelDir, model));
  const tokenizer = await AutoTokenizer.from_pretrained(model).catch((cause: unknown) => {
    throw failure('cannot read its tokenizer', cause);
  });
  const session_options = options.intraOpThreads ? { intraOpNumThreads: options.intraOpThreads } : {};
  const network = await AutoModelForSequenceClassification.from_pretrained(model, { dtype, session_options }).catch(
    (cause: unknown) => {
      throw failure('cannot load its weights', cause);
    },
  );

  const run = async (query: string, passages: string[]): Promise<number[]> => {
    const inputs = tokenizer(new Array<string>(passages.length).fill(query), {
      text_pair: passages,
      padding: true,
      truncation: true,
    });
    const { logits } = (await network(inputs)) as { logits: Tensor };
    const [rows, labels] = logits.dims as [number, number];
    if (rows !== passages.length || (labels !== 1 && labels !== 2))
      throw new UnavailableError(
        `its output is logits [${logits.dims.join(', ')}]; a cross-encoder gives one logit per pair, or two (the second for a relevant passage)`,
      );
    const data = logits.data as Float32Array;
    return passages.map((_, row) => data[row * labels + labels - 1]!);
  };

  // The first pass shows whether the graph runs and answers in a cross-encoder's shape.
  await run('query', ['passage']).catch((cause: unknown) => {
    throw cause instanceof UnavailableError ? cause : failure('cannot run it', cause);
  });

  return {
    async score(query, passages) {
      const scores = new Array<number>(passages.length);
      // Pairs of similar lengths pad less: score in length order, answer in input order.
      const lengths = passages.map((p) => Math.min(p.length + query.length, PAIR_CHARS));
      for (const batch of lengthBatches(lengths, batchSize, BATCH_CHARS)) {
        const batchScores = await run(
          query,
          batch.map((i) => passages[i]!),
        );
        batch.forEach((index, row) => (scores[index] = batchScores[row]!));
      }
      return scores;
    },
    async close() {
      await network.dispose();
    },
  };
};
