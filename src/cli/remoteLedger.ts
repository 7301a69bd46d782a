import http from 'node:http';
import https from 'node:https';
import { AppError, isErrorCode, UnavailableError } from '../errors.js';
import { codeForStatus } from '../http/httpRefusals.js';
import type { LedgerHandle } from '../module.js';

/** A server the CLI sends its operations to, and the credentials it sends along. */
export interface ServerAccess {
  url: string;
  apiKey?: string;
  token?: string;
}

/** Waits on the server's rate limit before a command gives up. */
const RATE_LIMIT_RETRIES = 10;

interface Reply {
  status: number;
  body: unknown;
  /** Seconds from `Retry-After`, when the reply has one. */
  retryAfter?: number;
}

interface ErrorBody {
  error?: { code?: string; detail?: string; message?: string; retry_after?: number };
}

/**
 * One JSON request with node's own client: it has no response timeout, and an ingest answers only
 * once what it wrote is indexed.
 */
export const post = (url: URL, body: string, headers: Record<string, string>) =>
  new Promise<Reply>((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', ...headers } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : {};
          } catch {
            parsed = { error: { detail: text.slice(0, 500) } };
          }
          const retryAfter = Number(response.headers['retry-after']);
          resolve({ status: response.statusCode ?? 0, body: parsed, ...(retryAfter >= 0 ? { retryAfter } : {}) });
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Operations run by a server through `POST /api/v1/operations/{name}`, its errors turned back into the CLI's. */
export const remoteLedger = (server: ServerAccess): LedgerHandle => {
  const base = server.url.replace(/\/+$/, '');
  const credentials: Record<string, string> = server.apiKey
    ? { 'x-api-key': server.apiKey }
    : server.token
      ? { authorization: `Bearer ${server.token}` }
      : {};

  const failure = (reply: Reply): AppError => {
    const error = (reply.body as ErrorBody).error;
    const detail = error?.detail ?? error?.message ?? `HTTP ${reply.status}`;
    if (reply.status === 401 && Object.keys(credentials).length === 0) {
      return new AppError(
        'CREDENTIALS_REQUIRED',
        `The server at ${base} needs credentials (${detail}): pass --api-key KEY or set CTX_API_KEY, or set CTX_TOKEN to a bearer token`,
      );
    }
    // The REST body names a catalogue code; a route in the tool API's format, or a proxy, only a status.
    const code = error?.code && isErrorCode(error.code) ? error.code : codeForStatus(reply.status);
    return new AppError(code, detail);
  };

  return {
    server: base,
    run: async <T>(name: string, input: unknown) => {
      const url = new URL(`${base}/api/v1/operations/${encodeURIComponent(name)}`);
      for (let attempt = 0; ; attempt++) {
        let reply: Reply;
        try {
          reply = await post(url, JSON.stringify(input ?? {}), credentials);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
          throw new UnavailableError(`Cannot reach the server at ${base} (${code})`, { cause: error });
        }
        if (reply.status >= 200 && reply.status < 300) return reply.body as T;
        // Told when to come back (the header, or the error's field), the CLI waits that long and asks again.
        const retryAfter = reply.retryAfter ?? (reply.body as ErrorBody).error?.retry_after;
        if (reply.status === 429 && attempt < RATE_LIMIT_RETRIES) {
          await sleep(Math.max(retryAfter ?? 1, 0.1) * 1000);
          continue;
        }
        throw failure(reply);
      }
    },
    // The server's projections run all along; its commands wait for what they wrote.
    catchUp: () => Promise.resolve(),
    // The server runs its own background work.
    startWork: () => Promise.resolve(),
  };
};
