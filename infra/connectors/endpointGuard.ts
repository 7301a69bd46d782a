import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import {
  bareHost,
  endpointProblem,
  endpointSetting,
  endpointSettingProblem,
  isPublicAddress,
  SERVICE_ENDPOINTS,
  type EndpointPolicy,
} from '../../src/domain/connectorEndpoints.js';
import { AppError, ValidationError } from '../../src/errors.js';
import { ConnectorNotConfiguredError, ConnectorServiceError } from '../../src/ports/remoteSource.js';

const PRIVATE = 'a loopback, private or link-local address, which connectors may not reach unless the operator sets connectors.allow_private_addresses';

/** A request a connector may not send: the settings name a server it may not reach. */
export class ConnectorEndpointError extends ConnectorNotConfiguredError {
  override name = 'ConnectorEndpointError';
}

/**
 * A failure this code base raised (an endpoint refused, a redirect not followed) behind a client
 * library's wrapping of it (`cause`, Slack's `original`): its message is ours, safe to show.
 */
export const connectorFailureIn = (error: unknown): AppError | null => {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    if (e instanceof AppError) return e;
    e = (e as { cause?: unknown }).cause ?? (e as { original?: unknown }).original;
  }
  return null;
};

/** A system error's code (`ECONNREFUSED`, `ENOTFOUND`) behind a client's wrapping, to name why a service could not be reached. */
export const networkCodeIn = (error: unknown): string | null => {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]{2,30}$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause ?? (e as { original?: unknown }).original;
  }
  return null;
};

/** DNS lookups that refuse a name resolving to a non-public address: checked on the very address the socket connects to. */
const guardedLookup =
  (policy: EndpointPolicy): LookupFunction =>
  (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = policy.allowPrivateAddresses ? undefined : addresses.find((a) => !isPublicAddress(a.address));
      if (refused) return callback(new ConnectorEndpointError(`${hostname} resolves to ${refused.address}, ${PRIVATE}`), '', 0);
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };

export interface ConnectorAgents {
  http: HttpAgent;
  https: HttpsAgent;
}

/** The connection pools every remote connector's requests go through. */
export const connectorAgents = (policy: EndpointPolicy): ConnectorAgents => {
  const lookup = guardedLookup(policy);
  return { http: new HttpAgent({ keepAlive: true, lookup }), https: new HttpsAgent({ keepAlive: true, lookup }) };
};

/** Refuses a request a connector of `kind` may not send. */
export const checkRequest = (kind: string, url: string, policy: EndpointPolicy) => {
  const problem = endpointProblem(kind, url, policy);
  if (problem) throw new ConnectorEndpointError(`The ${kind} connector may not send a request to a URL that ${problem}`);
};

/** A connection that stays silent this long is given up, as fetch gives up on one. */
const IDLE_TIMEOUT_MS = 300_000;

/** The body as sent, decompressed the way fetch does it (`accept-encoding` is asked for below). */
const decoded = (incoming: IncomingMessage): Readable => {
  const encoding = (incoming.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return incoming.pipe(createGunzip()).on('error', () => incoming.destroy());
  if (encoding === 'deflate') return incoming.pipe(createInflate()).on('error', () => incoming.destroy());
  if (encoding === 'br') return incoming.pipe(createBrotliDecompress()).on('error', () => incoming.destroy());
  return incoming;
};

/** One HTTP exchange through the guarded agents, answered as a fetch Response. */
const send = (url: URL, method: string, init: RequestInit, agents: ConnectorAgents): Promise<Response> =>
  new Promise((resolve, reject) => {
    const body = method === 'GET' || method === 'HEAD' ? undefined : init.body;
    if (body != null && typeof body !== 'string' && !(body instanceof URLSearchParams)) {
      reject(new TypeError('connectors send text request bodies only'));
      return;
    }
    const secure = url.protocol === 'https:';
    const headers: Record<string, string> = { 'accept-encoding': 'gzip, deflate, br' };
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const options = {
      method,
      headers,
      agent: secure ? agents.https : agents.http,
      timeout: IDLE_TIMEOUT_MS,
      ...(init.signal ? { signal: init.signal } : {}),
    };
    const request = (secure ? httpsRequest : httpRequest)(url, options, (incoming) => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(incoming.headers))
        for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
      const status = incoming.statusCode ?? 0;
      const empty = [204, 205, 304].includes(status) || method === 'HEAD';
      try {
        if (empty) incoming.resume();
        const stream = empty ? null : (Readable.toWeb(decoded(incoming)) as ReadableStream<Uint8Array>);
        if (!empty) ['content-encoding', 'content-length'].forEach((name) => headers.delete(name));
        resolve(new Response(stream, { status, statusText: incoming.statusMessage ?? '', headers }));
      } catch (error) {
        incoming.destroy();
        reject(error instanceof Error ? error : new TypeError(String(error)));
      }
    });
    request.on('timeout', () => request.destroy(new ConnectorServiceError(`${url.host} did not answer within ${IDLE_TIMEOUT_MS / 1000} s`)));
    request.on('error', reject);
    request.end(body == null ? undefined : String(body));
  });

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

/**
 * A `fetch` for a connector of `kind`: every request (each redirect too) is checked against the
 * policy before it is sent, names are checked again on the address connected to, and redirects are
 * followed only within the origin that answered them.
 */
export const guardedFetch = (kind: string, policy: EndpointPolicy, agents: ConnectorAgents): typeof fetch => {
  const service = SERVICE_ENDPOINTS[kind]?.service ?? kind;
  return async (input, init = {}) => {
    let url = new URL(input instanceof Request ? input.url : input instanceof URL ? input.href : input);
    let method = (init.method ?? 'GET').toUpperCase();
    for (let redirects = 0; ; redirects++) {
      checkRequest(kind, url.href, policy);
      const response = await send(url, method, init, agents);
      if (!REDIRECTS.has(response.status) || init.redirect === 'manual') return response;
      await response.body?.cancel();
      if (init.redirect === 'error') throw new ConnectorServiceError(`${service} answered with a redirect (HTTP ${response.status})`, { status: response.status });
      let next: URL;
      try {
        next = new URL(response.headers.get('location') ?? '', url);
      } catch {
        throw new ConnectorServiceError(`${service} answered with an unusable redirect (HTTP ${response.status})`, { status: response.status });
      }
      if (next.origin !== url.origin)
        throw new ConnectorServiceError(
          `${service} redirected to another origin (HTTP ${response.status}); connectors follow redirects only within ${url.origin}`,
          { status: response.status },
        );
      if (redirects >= MAX_REDIRECTS) throw new ConnectorServiceError(`${service} redirected more than ${MAX_REDIRECTS} times`, { status: response.status });
      if (response.status === 303 || (method === 'POST' && response.status !== 307 && response.status !== 308)) method = 'GET';
      url = next;
    }
  };
};

const LOOKUP_TIMEOUT_MS = 3_000;

/** The addresses a name resolves to now; none when it does not resolve in time. */
const addressesOf = (host: string): Promise<LookupAddress[]> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => resolve([]), LOOKUP_TIMEOUT_MS);
    dnsLookup(host, { all: true }, (error, addresses) => {
      clearTimeout(timer);
      resolve(error ? [] : addresses);
    });
  });

/**
 * Refuses, as a validation error, connector settings that name a server connectors may not reach,
 * the addresses its name resolves to now included. A name that does not resolve now is let through:
 * every connection checks the address it connects to anyway.
 */
export const connectorEndpointCheck =
  (policy: EndpointPolicy) =>
  async (kind: string, settings: Record<string, unknown>): Promise<void> => {
    const found = endpointSettingProblem(kind, settings, policy);
    if (found) throw new ValidationError(`Connector setting config.${found.field} ${found.problem}`, { field: `config.${found.field}` });
    const named = endpointSetting(kind, settings);
    if (!named || policy.allowPrivateAddresses) return;
    const host = bareHost(new URL(String(named.value).trim()).hostname);
    if (isIP(host)) return;
    const refused = (await addressesOf(host)).find((a) => !isPublicAddress(a.address));
    if (refused)
      throw new ValidationError(`Connector setting config.${named.field} names ${host}, which resolves to ${refused.address}, ${PRIVATE}`, {
        field: `config.${named.field}`,
      });
  };
