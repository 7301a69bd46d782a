import { createHttpReranker } from '../../infra/reranking/httpReranker.js';
import type { Config } from '../config.js';
import type { SearchDeps } from '../../queries/searchDocuments.js';

/** The configured reranker for search, or nothing when the provider is "none". */
export const rerankerFromConfig = ({ reranker }: Config): Pick<SearchDeps, 'rerank'> =>
  reranker.provider === 'none'
    ? {}
    : {
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
      };
