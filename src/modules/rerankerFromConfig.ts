import path from 'node:path';
import type { Logger } from 'pino';
import { createHttpReranker } from '../../infra/reranking/httpReranker.js';
import { createLocalReranker, DEFAULT_RERANKER_MODEL, type LocalReranker } from '../../infra/reranking/localReranker.js';
import type { Config } from '../config.js';
import type { SearchDeps } from '../../queries/search/searchDocuments.js';

/** Where a local cross-encoder's folder is looked for, and where `ctx model fetch --reranker` puts it. */
export const rerankerModelDir = ({ embeddings, reranker }: Config): string =>
  reranker.modelDir ?? path.join(embeddings.modelDir, 'reranker');

export interface ConfiguredReranker {
  /** What search is given: nothing when the provider is "none". */
  deps: Pick<SearchDeps, 'rerank'>;
  /** Said by a process that serves: loads a local model now, and warns when it cannot be used. */
  announce(logger: Logger): Promise<void>;
  close(): Promise<void>;
}

const localReranker = (config: Config): LocalReranker =>
  createLocalReranker({
    model: config.reranker.model ?? DEFAULT_RERANKER_MODEL,
    modelDir: rerankerModelDir(config),
    ...(config.embeddings.threads ? { intraOpThreads: config.embeddings.threads } : {}),
  });

/** The configured reranker for search. */
export const rerankerFromConfig = (config: Config): ConfiguredReranker => {
  const { reranker } = config;
  const done = () => Promise.resolve();
  if (reranker.provider === 'none') return { deps: {}, announce: done, close: done };
  if (reranker.provider !== 'local') {
    return {
      deps: {
        rerank: {
          topK: reranker.topK,
          reranker: createHttpReranker({
            api: reranker.provider,
            url: reranker.url!,
            model: reranker.model ?? 'default',
            apiKey: reranker.apiKey,
            timeoutMs: reranker.timeoutMs,
          }),
        },
      },
      announce: (logger) => {
        logger.info(`reranker: ${reranker.model ?? 'default'} through ${reranker.url}`);
        return done();
      },
      close: done,
    };
  }
  const local = localReranker(config);
  return {
    deps: { rerank: { topK: reranker.topK, reranker: local } },
    announce: (logger) =>
      local.open().then(
        () => logger.info(`reranker: ${local.model} from ${local.folder}`),
        (error: unknown) =>
          logger.warn(
            `reranking is off: ${(error as Error).message}. Run \`ctx model fetch --reranker ${local.model}\`, ` +
              'put the model files in that folder by hand, or set reranker.provider = "none"; search answers in fused order meanwhile',
          ),
      ),
    close: () => local.close(),
  };
};
