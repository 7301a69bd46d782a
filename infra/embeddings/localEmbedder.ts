import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DataType, FeatureExtractionPipeline } from '@huggingface/transformers';
import { UnavailableError, ValidationError } from '../../src/errors.js';
import type { Embedder, EmbeddingKind } from '../../src/ports/embedder.js';
import { embeddingActivity } from './embeddingActivity.js';
import { lengthBatches, withInstructionPrefix } from './vectors.js';
import type { InstructionPrefixes } from './vectors.js';

export type Pooling = 'cls' | 'mean';

export interface LocalEmbedderOptions extends InstructionPrefixes {
  /** A model id: its folder under `modelDir` (a Hugging Face repository name, such as `Xenova/bge-small-en-v1.5`). */
  model?: string;
  /** Folder holding `<model>/`, as `ctx model fetch` arranges it; nothing is downloaded. */
  modelDir: string;
  /** Defaults to the model's own (its `1_Pooling/config.json`, else what its family is known to use). */
  pooling?: Pooling;
  /** Texts per forward pass, at most. */
  batchSize?: number;
  /** Characters per forward pass, at most, counting each text as long as the longest it is padded to. */
  batchChars?: number;
  /** ONNX weights to run; defaults to what the folder holds (fp32 `model.onnx` over `model_quantized.onnx`). */
  dtype?: DataType;
  /** Threads ONNX Runtime uses within one forward pass; its default is one per core. */
  intraOpThreads?: number;
}

export const DEFAULT_LOCAL_MODEL = 'Xenova/bge-small-en-v1.5';
/**
 * About 512 tokens of text per forward pass. Bigger batches run slower on a CPU, not faster: their
 * activations outgrow its caches. On two cores, SciFact abstracts embed at 8.4/s with bge-small's
 * fp32 weights and 22.3/s with its int8 ones, against 6.7/s and 13.3/s 32 at a time; short texts
 * (queries, lines of code) still share a pass.
 */
const DEFAULT_BATCH_CHARS = 2048;
const BGE_QUERY_PREFIX = 'Represent this sentence for searching relevant passages: ';

/** What a model family expects when its folder does not say: bge pools the CLS token and prefixes queries. */
const familyDefaults = (model: string): { pooling: Pooling; queryPrefix?: string } =>
  /(^|\/)bge-[^/]*-en/i.test(model) ? { pooling: 'cls', queryPrefix: BGE_QUERY_PREFIX } : { pooling: 'mean' };

/** The pooling a sentence-transformers folder declares in `1_Pooling/config.json`, if it does. */
const declaredPooling = (modelFolder: string): Pooling | undefined => {
  const path = join(modelFolder, '1_Pooling', 'config.json');
  if (!existsSync(path)) return undefined;
  const config = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  if (config.pooling_mode_cls_token === true) return 'cls';
  if (config.pooling_mode_mean_tokens === true) return 'mean';
  return undefined;
};

/** The width of a model's vectors, from its configuration (read as transformers.js reads it, without loading the library). */
const hiddenSizeIn = async (modelFolder: string, model: string): Promise<number> => {
  let config: { hidden_size?: unknown };
  try {
    config = JSON.parse(await readFile(join(modelFolder, 'config.json'), 'utf8')) as { hidden_size?: unknown };
  } catch (cause) {
    throw new UnavailableError(`cannot read the configuration of model ${model}: ${(cause as Error).message}`, { cause });
  }
  if (typeof config.hidden_size !== 'number') throw new ValidationError(`Model '${model}' declares no hidden_size`);
  return config.hidden_size;
};

/**
 * The name of the vector space a model's weights embed into: the model id for its published fp32
 * weights, qualified otherwise, since a quantised export embeds a little differently and its
 * vectors must not be cached or compared with those of the full weights.
 */
export const vectorSpaceName = (model: string, dtype: DataType): string =>
  dtype === 'fp32' ? model : `${model}@${dtype}`;

/** The weights a model folder holds: fp32 `onnx/model.onnx` over int8 `onnx/model_quantized.onnx`. */
export const onnxDtypeIn = (modelFolder: string): DataType => {
  if (existsSync(join(modelFolder, 'onnx', 'model.onnx'))) return 'fp32';
  if (existsSync(join(modelFolder, 'onnx', 'model_quantized.onnx'))) return 'q8';
  throw new ValidationError(`no onnx/model.onnx or onnx/model_quantized.onnx in ${modelFolder}`);
};

/**
 * A sentence-embedding model run in-process through transformers.js (ONNX Runtime) from a local
 * folder. The weights are loaded on first use, once. Downloads are turned off for the whole
 * process, since transformers.js keeps that setting globally.
 */
/** An embedder whose work can be given up between two passes of the model. */
export interface LocalEmbedder extends Embedder {
  embed(texts: readonly string[], kind: EmbeddingKind, stopping?: AbortSignal): Promise<Float32Array[]>;
}

/** A local model as its folder describes it: where it is, its weights' type, the name of its vector space and its width. */
export interface LocalModel {
  id: string;
  folder: string;
  dtype: DataType;
  /** The vector space's name (see `vectorSpaceName`). */
  model: string;
  dimensions: number;
}

/** Reads what a model's folder says of it, without loading the model; throws when the folder holds no model. */
export const localModelOf = async (options: Pick<LocalEmbedderOptions, 'model' | 'modelDir' | 'dtype'>): Promise<LocalModel> => {
  const id = options.model ?? DEFAULT_LOCAL_MODEL;
  const folder = join(options.modelDir, id);
  if (!existsSync(join(folder, 'config.json'))) throw new ValidationError(`no model files in ${folder}`);
  const dtype = options.dtype ?? onnxDtypeIn(folder);
  return { id, folder, dtype, model: vectorSpaceName(id, dtype), dimensions: await hiddenSizeIn(folder, id) };
};

export const createLocalEmbedder = async (options: LocalEmbedderOptions): Promise<LocalEmbedder> => {
  const batchSize = options.batchSize ?? 32;
  const batchChars = options.batchChars ?? DEFAULT_BATCH_CHARS;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new ValidationError('batchSize must be a positive integer');

  const { id: model, folder, dtype, dimensions, model: vectorSpace } = await localModelOf(options);
  const pooling = options.pooling ?? declaredPooling(folder);
  const family = familyDefaults(model);
  const resolvedPooling = pooling ?? family.pooling;
  const prefixes: InstructionPrefixes = {
    queryPrefix: options.queryPrefix ?? family.queryPrefix,
    documentPrefix: options.documentPrefix,
  };

  let loading: Promise<FeatureExtractionPipeline> | undefined;
  const extractor = (): Promise<FeatureExtractionPipeline> => {
    const session_options = options.intraOpThreads ? { intraOpNumThreads: options.intraOpThreads } : {};
    // The library (a second of loading on a small machine) comes with the first texts to embed.
    loading ??= import('@huggingface/transformers')
      .then(({ env, pipeline }) => {
        env.allowRemoteModels = false;
        env.localModelPath = options.modelDir;
        return pipeline('feature-extraction', model, { dtype, session_options });
      })
      .catch((cause: unknown) => {
        loading = undefined;
        throw new UnavailableError(`cannot load the weights of model ${model}: ${(cause as Error).message}`, { cause });
      });
    return loading;
  };

  const embedBatch = async (run: FeatureExtractionPipeline, texts: string[]): Promise<Float32Array[]> => {
    const output = await run(texts, { pooling: resolvedPooling, normalize: true });
    const flat = output.data as Float32Array;
    return texts.map((_, row) => flat.slice(row * dimensions, (row + 1) * dimensions));
  };

  return {
    model: vectorSpace,
    dimensions,
    /** Given `stopping`, gives up between two passes of the model once it is aborted: its caller stops waiting. */
    async embed(texts: readonly string[], kind: EmbeddingKind, stopping?: AbortSignal): Promise<Float32Array[]> {
      if (texts.length === 0) return [];
      const run = await extractor();
      const inputs = withInstructionPrefix(texts, kind, prefixes);
      // Batches of similar lengths pad less: embed in length order, answer in input order.
      const batches = lengthBatches(inputs.map((text) => text.length), batchSize, batchChars);
      const vectors: Float32Array[] = new Array<Float32Array>(inputs.length);
      for (const batch of batches) {
        if (stopping) {
          // A close message is read between two passes only if the thread's event loop gets a turn.
          await new Promise((resolve) => setImmediate(resolve));
          if (stopping.aborted) throw new UnavailableError('The embedder is closing');
        }
        const batchVectors = await embedBatch(
          run,
          batch.map((i) => inputs[i]!),
        );
        batch.forEach((inputIndex, row) => (vectors[inputIndex] = batchVectors[row]!));
        embeddingActivity.vectorsMade += batch.length;
      }
      return vectors;
    },
    async close(): Promise<void> {
      const pending = loading;
      loading = undefined;
      if (pending) await (await pending.catch(() => undefined))?.dispose();
    },
  };
};
