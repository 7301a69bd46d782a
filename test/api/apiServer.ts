import { createHmac } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { createApiKey } from '../../commands/access/createApiKey.js';
import { loadConfig } from '../../src/config.js';
import { SCOPES, type Scope } from '../../src/domain/auth.js';
import { commandContext } from '../../src/engine/commands.js';
import { createJwtCodec } from '../../src/http/api/jwtCodec.js';
import { openLedger, startServer, type Ledger, type RunningServer } from '../../src/main.js';
import { EVERY_TOOLSET, LIFTED_RATE_LIMITS, tempDataDir, tempRootsEnv } from '../support/ledger.js';

export const JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

export interface ApiServer {
  server: RunningServer;
  ledger: Ledger;
  url: string;
  /** A signed access token for a subject in a tenant with these scopes. */
  token(scopes: readonly Scope[], tenant?: string, subject?: string): string;
  apiKey(scopes: readonly Scope[], tenant?: string): Promise<{ keyId: string; key: string }>;
  call(
    method: string,
    route: string,
    options?: {
      token?: string;
      apiKey?: string;
      body?: unknown;
      raw?: string;
      headers?: Record<string, string>;
    },
  ): Promise<{
    status: number;
    headers: Headers;
    body: Record<string, unknown>;
  }>;
  close(): Promise<void>;
}

/**
 * A real server with auth on, on a loopback port, configured by `env` (and a `ctx.toml` file when
 * given), on a fresh data directory or on `dataDir` (to start again where a closed one left off).
 */
export const startApiServer = async (
  env: NodeJS.ProcessEnv = {},
  file?: string,
  dataDir = tempDataDir('ctx-api-'),
): Promise<ApiServer> => {
  const config = loadConfig({
    file,
    env: {
      CTX_AUTH__MODE: 'on',
      CTX_AUTH__JWT_SECRET: JWT_SECRET,
      CTX_EMBEDDINGS__PROVIDER: 'none',
      CTX_LOG__LEVEL: 'silent',
      ...tempRootsEnv(),
      ...EVERY_TOOLSET,
      ...LIFTED_RATE_LIMITS,
      ...env,
    },
    overrides: { storage: { dataDir }, server: { bind: '127.0.0.1:0' } },
  });
  const ledger = await openLedger(config, { logger: pino({ level: 'silent' }) });
  const server = await startServer(ledger);
  const jwt = (await createJwtCodec(config.auth))!;
  const url = `${server.url}/api/v1`;
  return {
    server,
    ledger,
    url,
    token: (scopes, tenant = 'acme', subject = 'alice') =>
      jwt.sign({ sub: subject, scope: scopes.join(' '), tenant_id: tenant }),
    apiKey: async (scopes, tenant = 'acme') => {
      const created = await createApiKey(
        ledger.store,
        { scopes: [...scopes], tenant },
        commandContext({ subject: 'test', tenant: null, via: 'cli' }),
      );
      await ledger.projections.waitFor(await ledger.store.headPosition(), { timeoutMs: 10_000 });
      return created;
    },
    call: async (method, route, options = {}) => {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      if (options.apiKey) headers['x-api-key'] = options.apiKey;
      const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
      if (body !== undefined) headers['content-type'] ??= 'application/json';
      const response = await fetch(`${url}${route}`, { method, headers, body });
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      };
    },
    close: () => server.close(),
  };
};

export const ALL_SCOPES: readonly Scope[] = SCOPES;

/** Documents for a tenant, through the ledger's own ingest operation, then every index has them (embedded too). */
export const ingest = async (
  api: ApiServer,
  tenant: string,
  documents: { source_id: string; title?: string; body: string; updated_at?: string }[],
  source = 'filesystem',
) => {
  await api.ledger
    .operation('documents.ingest_batch')
    .run(
      { source, documents },
      { actor: { subject: 'test', tenant, via: 'cli' }, correlationId: crypto.randomUUID(), project: tenant },
    );
  await api.ledger.projections.waitFor(await api.ledger.store.headPosition(), { all: true, timeoutMs: 20_000 });
};

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A hand-made HS256 token, for claims the product would never sign (expired, foreign audience, …). */
export const craftToken = (claims: Record<string, unknown>, secret = JWT_SECRET, alg = 'HS256') => {
  const head = `${b64({ alg, typ: 'JWT' })}.${b64(claims)}`;
  if (alg === 'none') return `${head}.`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
};

/** A folder inside the working directory, and a link inside it that points outside. */
export const makeRoots = (dir: string) => {
  mkdirSync(path.join(dir, 'docs'), { recursive: true });
  writeFileSync(path.join(dir, 'docs', 'readme.md'), '# Docs');
  symlinkSync('/tmp', path.join(dir, 'escape'));
};
