import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UnavailableError } from '../../src/errors.js';
import type { Reranker } from '../../src/ports/reranker.js';
import { openWorkerRpc, type WorkerRpc } from '../workers/workerRpc.js';
import type { CrossEncoderOptions } from './crossEncoder.js';

export const DEFAULT_RERANKER_MODEL = 'Xenova/ms-marco-MiniLM-L-6-v2';

type Lane = WorkerRpc<{ query: string; texts: readonly string[] }, number[], unknown>;

/** What a cross-encoder's folder holds, in transformers.js's layout. */
const MODEL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json'];
const WEIGHTS_FILES = ['onnx/model.onnx', 'onnx/model_quantized.onnx'];

/** The folder's files as they are now: a model that failed to load is tried again once they change. */
const filesState = (folder: string) =>
  [...MODEL_FILES, ...WEIGHTS_FILES]
    .map((file) => {
      const stat = statSync(join(folder, file), { throwIfNoEntry: false });
      return stat ? `${file}:${stat.size}:${stat.mtimeMs}` : '';
    })
    .join('|');

export interface LocalReranker extends Reranker {
  /** Where the model is read from. */
  readonly folder: string;
  /** Loads the model now rather than on the first search; rejects with an UnavailableError saying why it cannot. */
  open(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A cross-encoder run in a worker thread from `<modelDir>/<model>/`. It loads on first use; one
 * that cannot be (no files, files that do not load) fails each search with an UnavailableError
 * saying why, so search answers in fused order with a notice, and is tried again once its folder
 * changes: a model fetched while the server runs is used without a restart.
 */
export const createLocalReranker = (options: CrossEncoderOptions): LocalReranker => {
  const folder = join(options.modelDir, options.model);
  let opening: Promise<Lane> | undefined;
  let lane: Lane | undefined;
  let failed: { files: string; error: UnavailableError } | undefined;
  let closed = false;
  const cannotLoad = (reason: string) =>
    new UnavailableError(`The local reranker ${options.model} cannot be loaded from ${folder}: ${reason}`);

  const start = async (): Promise<Lane> => {
    const missing = MODEL_FILES.filter((file) => !existsSync(join(folder, file)));
    if (!WEIGHTS_FILES.some((file) => existsSync(join(folder, file)))) missing.push(WEIGHTS_FILES.join(' or '));
    if (missing.length > 0) throw cannotLoad(`it has no ${missing.join(', ')}`);
    const files = filesState(folder);
    if (failed?.files === files) throw failed.error;
    const started: Lane = openWorkerRpc(new URL('./crossEncoderWorker', import.meta.url), options);
    try {
      await started.ready;
    } catch (error) {
      failed = { files, error: cannotLoad((error as Error).message) };
      throw failed.error;
    }
    failed = undefined;
    return (lane = started);
  };

  const open = (): Promise<Lane> => {
    if (closed) return Promise.reject(new UnavailableError('The reranker is closed'));
    // A thread that ended is started again.
    if (lane && !lane.alive()) opening = lane = undefined;
    opening ??= start().catch((error: unknown) => {
      opening = undefined;
      throw error;
    });
    return opening;
  };

  return {
    model: options.model,
    folder,
    open: async () => void (await open()),
    async score(query, texts) {
      if (texts.length === 0) return [];
      return (await open()).call({ query, texts });
    },
    async close() {
      closed = true;
      const pending = opening;
      opening = lane = undefined;
      await (await pending?.catch(() => undefined))?.close();
    },
  };
};
