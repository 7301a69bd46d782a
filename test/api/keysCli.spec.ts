import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createJwtCodec } from '../../src/http/api/jwtCodec.js';
import { openLedger, startServer } from '../../src/main.js';
import { runCtx } from '../support/cli.js';
import { tempDataDir } from '../support/ledger.js';
import { JWT_SECRET } from './apiServer.js';

const env = { CTX_AUTH__MODE: 'on', CTX_AUTH__JWT_SECRET: JWT_SECRET, CTX_EMBEDDINGS__PROVIDER: 'none' };

describe('ctx keys and ctx tokens', () => {
  it('creates a key that works, lists it without the key, revokes it, and issues tokens', async () => {
    const dataDir = tempDataDir('ctx-keys-');
    const created = await runCtx(
      [
        'keys',
        'create',
        '--scopes',
        'search:read,index:read',
        '--tenant',
        'acme',
        '--label',
        'ci',
        '--json',
        '--data-dir',
        dataDir,
      ],
      env,
    );
    expect(created.code).toBe(0);
    const { key_id: keyId, api_key: key } = JSON.parse(created.stdout) as { key_id: string; api_key: string };
    expect(key).toMatch(/^[0-9a-f]{32}$/);

    const listed = await runCtx(['keys', 'list', '--json', '--data-dir', dataDir], env);
    expect(listed.stdout).toContain(keyId);
    expect(listed.stdout).not.toContain(key);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({
        key_id: keyId,
        scopes: ['search:read', 'index:read'],
        tenant: 'acme',
        label: 'ci',
        revoked: false,
      }),
    ]);

    const tokens = await runCtx(
      ['tokens', '--subject', 'ci-bot', '--scopes', 'search:read', '--tenant', 'acme', '--json', '--data-dir', dataDir],
      env,
    );
    expect(tokens.code).toBe(0);
    const pair = JSON.parse(tokens.stdout) as {
      access_token: string;
      refresh_token: string;
      expires_in: number;
    };
    expect(pair.expires_in).toBe(900);

    const bad = await runCtx(
      ['keys', 'create', '--scopes', 'root:all', '--tenant', 'acme', '--data-dir', dataDir],
      env,
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/Unknown scopes: root:all/);

    const config = loadConfig({
      env: { ...env, CTX_LOG__LEVEL: 'silent' },
      overrides: { storage: { dataDir }, server: { bind: '127.0.0.1:0' } },
    });
    let server = await startServer(await openLedger(config, { logger: pino({ level: 'silent' }) }));
    const search = (headers: Record<string, string>) =>
      fetch(`${server.url}/api/v1/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{"query":"x"}',
      });
    try {
      expect((await search({ 'x-api-key': key })).status).toBe(200);
      expect((await search({ authorization: `Bearer ${pair.access_token}` })).status).toBe(200);
    } finally {
      await server.close();
    }

    expect((await runCtx(['keys', 'revoke', keyId, '--data-dir', dataDir], env)).code).toBe(0);
    const reopened = await openLedger(config, { logger: pino({ level: 'silent' }) });
    server = await startServer(reopened);
    try {
      await reopened.projections.waitFor(await reopened.store.headPosition(), { timeoutMs: 10_000 });
      expect((await search({ 'x-api-key': key })).status).toBe(401);
    } finally {
      await server.close();
    }
  });

  it("records keys in their tenant's audit, and revokes tokens with ctx tokens revoke", async () => {
    const dataDir = tempDataDir('ctx-keys-');
    const json = async (args: string[]) => {
      const run = await runCtx([...args, '--json', '--data-dir', dataDir], env);
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as Record<string, string>;
    };
    const { key_id: keyId } = await json(['keys', 'create', '--scopes', 'admin', '--tenant', 'acme']);
    const pair = await json(['tokens', '--subject', 'ci-bot', '--scopes', 'search:read', '--tenant', 'acme']);
    expect(pair.refresh_token).toContain(pair.family_id);
    expect(await json(['tokens', 'revoke', pair.family_id!])).toEqual({ family_id: pair.family_id, revoked: true });

    const config = loadConfig({
      env: { ...env, CTX_LOG__LEVEL: 'silent' },
      overrides: { storage: { dataDir }, server: { bind: '127.0.0.1:0' } },
    });
    const ledger = await openLedger(config, { logger: pino({ level: 'silent' }) });
    const server = await startServer(ledger);
    const jwt = (await createJwtCodec(config.auth))!;
    const admin = (tenant: string) => jwt.sign({ sub: 'auditor', scope: 'admin', tenant_id: tenant });
    const call = (route: string, token: string, body?: unknown) =>
      fetch(`${server.url}/api/v1${route}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    try {
      await ledger.projections.waitFor(await ledger.store.headPosition(), { timeoutMs: 10_000 });
      const keysIn = async (tenant: string) => {
        const { events } = (await (await call('/audit/events?type=ApiKeyCreated', admin(tenant))).json()) as {
          events: { data: { keyId: string } }[];
        };
        return events.map((e) => e.data.keyId);
      };
      expect(await keysIn('default')).not.toContain(keyId);
      expect(await keysIn('acme')).toContain(keyId);
      expect((await call('/search', pair.access_token!, { query: 'x' })).status).toBe(401);
      const refreshed = await fetch(`${server.url}/api/v1/auth/refresh`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: pair.refresh_token }),
      });
      expect(refreshed.status).toBe(401);
    } finally {
      await server.close();
    }
  });
});
