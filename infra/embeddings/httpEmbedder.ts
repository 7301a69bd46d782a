import { z } from 'zod';
import { CredentialsRefusedError, UnavailableError, ValidationError } from '../../src/errors.js';
import { serverMessage } from '../serverMessage.js';
import { embeddingActivity } from './embeddingActivity.js';
import type { Embedder, EmbeddingKind } from '../../src/ports/embedder.js';
import { inBatches, l2Normalise, withInstructionPrefix } from './vectors.js';
import type { InstructionPrefixes } from './vectors.js';

/** `openai`: `POST {url}/v1/embeddings` (OpenAI and compatible servers); `ollama`: `POST {url}/api/embed`. */
export type EmbeddingApi = 'openai' | 'ollama';

export interface HttpEmbedderOptions extends InstructionPrefixes {
  /** The server's base URL, e.g. `http://127.0.0.1:11434` or `https://api.openai.com`. */
  url: string;
  model: string;
  api: EmbeddingApi;
  apiKey?: string;
  /** Expected vector length; when omitted, one probe request finds it. */
  dimensions?: number;
  timeoutMs?: number;
  /** Texts per request. */
  batchSize?: number;
}

const OpenAiResponseSchema = z.object({
  data: z.array(z.object({ index: z.number().int(), embedding: z.array(z.number()) })),
});
const OllamaResponseSchema = z.object({ embeddings: z.array(z.array(z.number())) });

const endpoints: Record<EmbeddingApi, string> = { openai: '/v1/embeddings', ollama: '/api/embed' };

const parseVectors = (api: EmbeddingApi, body: unknown): number[][] => {
  if (api === 'ollama') return OllamaResponseSchema.parse(body).embeddings;
  return OpenAiResponseSchema.parse(body)
    .data.sort((a, b) => a.index - b.index)
    .map((item) => item.embedding);
};

/**
 * An embedding server reached over HTTP. Unreachable servers, timeouts, 429 and 5xx answers throw
 * `UnavailableError` (worth retrying); 401 and 403, `CredentialsRefusedError` (the configured key
 * to mend); 404, a model or address to mend (an outage with `CONFIG_ERROR`); other 4xx answers
 * throw `ValidationError` with the server's message. Vectors are L2-normalised here whatever the
 * server returns.
 */
export const createHttpEmbedder = async (options: HttpEmbedderOptions): Promise<Embedder> => {
  const { model, api, apiKey } = options;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const batchSize = options.batchSize ?? 64;
  const base = options.url.replace(/\/+$/, '');
  // OpenAI clients take a base URL that already ends in /v1; accept both forms.
  const path = api === 'openai' && base.endsWith('/v1') ? '/embeddings' : endpoints[api];
  const endpoint = URL.canParse(base + path) ? new URL(base + path) : undefined;
  if (!endpoint) throw new ValidationError(`Not a URL: '${options.url}'`);

  // Closing ends the requests in flight: a process that stops does not wait out a slow server.
  const inFlight = new Set<AbortController>();
  let closed = false;
  const closingError = (cause?: unknown) => new UnavailableError('The embedder is closing', { cause });
  /** The server's answer to one request, within the timeout. */
  const answerOf = async (input: string[]): Promise<{ status: number; text: string }> => {
    if (closed) throw closingError();
    const abort = new AbortController();
    inFlight.add(abort);
    // A timer of its own: a timeout signal joined to another with AbortSignal.any may never fire.
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    try {
      let response: Response;
      try {
        response = await fetch(endpoint, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
          },
          body: JSON.stringify({ model, input }),
          signal: abort.signal,
        });
      } catch (cause) {
        throw closed ? closingError(cause) : new UnavailableError(`Embedding server ${endpoint.origin} is unreachable`, { cause });
      }
      try {
        return { status: response.status, text: await response.text() };
      } catch (cause) {
        throw closed
          ? closingError(cause)
          : new UnavailableError(`Embedding server ${endpoint.origin} broke off its answer`, { cause });
      }
    } finally {
      clearTimeout(timer);
      inFlight.delete(abort);
    }
  };

  const request = async (input: string[]): Promise<Float32Array[]> => {
    const { status, text } = await answerOf(input);
    if (status === 429 || status >= 500) {
      throw new UnavailableError(`Embedding server answered ${status}: ${serverMessage(text)}`);
    }
    if (status === 401 || status === 403) {
      throw new CredentialsRefusedError(
        `Embedding server ${endpoint.origin} refused the configured API key (HTTP ${status}: ` +
          `${serverMessage(text)}). Set embeddings.api_key to a key it accepts`,
      );
    }
    if (status === 404) {
      throw new UnavailableError(
        `Embedding server ${endpoint.origin} has no model '${model}' at ${endpoint.pathname} (HTTP 404: ` +
          `${serverMessage(text)}). Set embeddings.model to a model it serves and embeddings.url to its address` +
          (api === 'ollama' ? `, or pull the model there (ollama pull ${model})` : ''),
        undefined,
        'CONFIG_ERROR',
      );
    }
    if (status < 200 || status > 299) {
      throw new ValidationError(`Embedding server rejected the request: ${serverMessage(text)}`, {
        status,
        model,
      });
    }
    let vectors: number[][];
    try {
      vectors = parseVectors(api, JSON.parse(text));
    } catch (cause) {
      throw new UnavailableError(
        `Embedding server ${endpoint.origin} sent an answer that is not a list of embeddings`,
        {
          cause,
        },
      );
    }
    if (vectors.length !== input.length) {
      throw new UnavailableError(
        `Embedding server returned ${vectors.length} vectors for ${input.length} texts`,
      );
    }
    return vectors.map(l2Normalise);
  };

  const dimensions = options.dimensions ?? (await request(['dimension probe']))[0]?.length ?? 0;

  return {
    model,
    dimensions,
    async embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]> {
      const vectors: Float32Array[] = [];
      for (const batch of inBatches(withInstructionPrefix(texts, kind, options), batchSize)) {
        vectors.push(...(await request(batch)));
        embeddingActivity.vectorsMade += batch.length;
      }
      const wrong = vectors.find((vector) => vector.length !== dimensions);
      if (wrong) {
        throw new ValidationError(
          `Model '${model}' returned ${wrong.length}-d vectors, expected ${dimensions}`,
        );
      }
      return vectors;
    },
    close: () => {
      closed = true;
      inFlight.forEach((abort) => abort.abort());
      return Promise.resolve();
    },
  };
};
