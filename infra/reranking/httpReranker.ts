import { CredentialsRefusedError, UnavailableError } from '../../src/errors.js';
import type { Reranker } from '../../src/ports/reranker.js';
import { serverMessage } from '../serverMessage.js';

/** `tei`: Text Embeddings Inference's `POST /rerank`; `cohere` and `jina`: `POST /v1/rerank`. */
export type RerankApi = 'tei' | 'cohere' | 'jina';

export interface HttpRerankerOptions {
  api: RerankApi;
  /** The server's base URL, e.g. `http://127.0.0.1:8080` or `https://api.cohere.com`. */
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
}

interface Scored {
  index: number;
  score: number;
}

const requestFor = ({ api, model }: HttpRerankerOptions, query: string, texts: readonly string[]) =>
  api === 'tei'
    ? { path: '/rerank', body: { query, texts, raw_scores: false } }
    : { path: '/v1/rerank', body: { model, query, documents: texts, top_n: texts.length } };

/** The answer's scores, whatever the API: TEI answers a list, Cohere and Jina `{ results }`. */
const scoresOf = (api: RerankApi, answer: unknown): Scored[] | null => {
  const list = api === 'tei' ? answer : (answer as { results?: unknown } | null)?.results;
  if (!Array.isArray(list)) return null;
  const scored = list.map((item: { index?: unknown; score?: unknown; relevance_score?: unknown }) => ({
    index: item.index,
    score: api === 'tei' ? item.score : item.relevance_score,
  }));
  return scored.every((s) => Number.isInteger(s.index) && typeof s.score === 'number') ? (scored as Scored[]) : null;
};

/**
 * A cross-encoder served over HTTP. A server that cannot answer is an `UnavailableError`, and one
 * that refuses the key a `CredentialsRefusedError` naming the setting: either way search answers in
 * fused order, saying why.
 */
export const createHttpReranker = (options: HttpRerankerOptions): Reranker => {
  const endpoint = options.url.replace(/\/+$/, '');
  return {
    model: options.model,
    score: async (query, texts) => {
      if (texts.length === 0) return [];
      const { path, body } = requestFor(options, query, texts);
      const fail = (reason: string, cause?: unknown) =>
        new UnavailableError(`The reranker at ${endpoint} ${reason}`, { cause });
      let response: Response;
      try {
        response = await fetch(`${endpoint}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch (error) {
        throw fail(`could not be reached (${(error as Error).message})`, error);
      }
      if (response.status === 401 || response.status === 403) {
        const said = serverMessage(await response.text().catch(() => ''));
        throw new CredentialsRefusedError(
          `The reranker at ${endpoint} refused the configured API key (HTTP ${response.status}: ${said}). ` +
            'Set reranker.api_key to a key it accepts',
        );
      }
      if (!response.ok) throw fail(`answered ${response.status}`);
      const scored = scoresOf(options.api, await response.json().catch(() => null));
      if (!scored) throw fail('answered in an unexpected shape');
      const scores = new Array<number | undefined>(texts.length);
      for (const { index, score } of scored) if (index >= 0 && index < texts.length) scores[index] = score;
      if (scores.some((s) => s === undefined)) throw fail('left some passages unscored');
      return scores as number[];
    },
  };
};
