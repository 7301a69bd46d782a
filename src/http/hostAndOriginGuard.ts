import cors from '@fastify/cors';
import {
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  validateHostHeader,
  validateOriginHeader,
} from '@modelcontextprotocol/server';
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../ports/logger.js';
import { refuse } from './surfaceErrors.js';

export interface BrowserPolicy {
  /** Host names besides localhost, 127.0.0.1 and [::1] that requests may address. */
  allowedHosts: readonly string[];
  /** Origins besides localhost ones whose pages may call the server; `*` allows any. */
  corsOrigins: readonly string[];
}

const urlOf = (value: string): URL | null => {
  try {
    return new URL(value);
  } catch {
    return null;
  }
};

/**
 * What a web page could make a browser send, refused on every route before anything else runs: a
 * `Host` the server is not known by (DNS rebinding) and an `Origin` that may not call it
 * (cross-site requests, which browsers send even when they cannot read the answer). Allowed
 * origins get CORS headers; a page served by the server itself is same-origin and needs none.
 */
export const guardHostAndOrigin = async (app: FastifyInstance, policy: BrowserPolicy, logger: Logger) => {
  const hosts = [...localhostAllowedHostnames(), ...policy.allowedHosts];
  const anyOrigin = policy.corsOrigins.includes('*');
  const origins = new Set(policy.corsOrigins);
  const corsAllows = (origin: string): boolean =>
    anyOrigin ||
    validateOriginHeader(origin, localhostAllowedOrigins()).ok ||
    origins.has(urlOf(origin)?.origin ?? '');
  if (anyOrigin)
    logger.warn(
      { corsOrigins: policy.corsOrigins },
      'server.cors_origins allows every origin: any web page open in a browser can call this server',
    );

  app.addHook('onRequest', async (request, reply) => {
    const host = validateHostHeader(request.headers.host, hosts);
    if (!host.ok) {
      return refuse(
        request,
        reply,
        403,
        `${host.message}: this server answers only to localhost and server.allowed_hosts`,
      );
    }
    const origin = request.headers.origin;
    if (!origin || corsAllows(origin)) return;
    const sameOrigin = urlOf(origin)?.host === request.headers.host?.toLowerCase();
    if (!sameOrigin) {
      return refuse(
        request,
        reply,
        403,
        `Origin ${origin} may not call this server: it is not listed in server.cors_origins`,
      );
    }
  });
  await app.register(cors, {
    origin: (origin, callback) => callback(null, origin !== undefined && corsAllows(origin)),
  });
};
