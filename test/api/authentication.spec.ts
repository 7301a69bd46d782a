import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../commands/access/revokeApiKey.js';
import { commandContext } from '../../src/engine/commands.js';
import { issueTokenPair } from '../../commands/access/rotateRefreshToken.js';
import { createJwtCodec } from '../../src/http/api/jwtCodec.js';
import { ALL_SCOPES, craftToken, startApiServer, type ApiServer } from './apiServer.js';

const now = () => Math.floor(Date.now() / 1000);
const claims = (extra: Record<string, unknown> = {}) => ({
  iss: 'context-engine',
  aud: 'api',
  sub: 'mallory',
  scope: 'search:read',
  tenant_id: 'acme',
  iat: now(),
  exp: now() + 600,
  ...extra,
});

describe('authentication of /api/v1', () => {
  let api: ApiServer;
  const search = (options: Parameters<ApiServer['call']>[2]) =>
    api.call('POST', '/search', { body: { query: 'anything' }, ...options });

  beforeAll(async () => {
    api = await startApiServer();
  });
  afterAll(() => api.close());

  it('accepts a valid bearer token', async () => {
    expect((await search({ token: craftToken(claims()) })).status).toBe(200);
  });

  it.each([
    ['no credentials', {}],
    ['an expired token', { token: craftToken(claims({ exp: now() - 60 })) }],
    ['a token not yet valid', { token: craftToken(claims({ nbf: now() + 3600 })) }],
    ['a forged signature', { token: craftToken(claims(), 'another-secret-another-secret-another-secret') }],
    ['a foreign audience', { token: craftToken(claims({ aud: 'billing' })) }],
    ['a foreign issuer', { token: craftToken(claims({ iss: 'somebody-else' })) }],
    ['an unsigned token', { token: craftToken(claims(), '', 'none') }],
    ['a token without tenant', { token: craftToken(claims({ tenant_id: undefined })) }],
    ['garbage', { token: 'not.a.token' }],
    ['a malformed API key', { apiKey: 'xyz' }],
    ['an unknown API key', { apiKey: '0123456789abcdef0123456789abcdef' }],
  ])('answers 401 to %s', async (_name, options) => {
    const response = await search(options);
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ error: { code: 'AUTHENTICATION_ERROR', retryable: false } });
  });

  it('refuses a bad bearer token even beside a valid API key, on every surface', async () => {
    const { key } = await api.apiKey(ALL_SCOPES);
    expect((await search({ apiKey: key })).status).toBe(200);
    const forged = craftToken(claims(), 'another-secret-another-secret-another-secret');
    const refused = await search({ apiKey: key, token: forged });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: { code: 'AUTHENTICATION_ERROR', detail: 'Invalid token' } });
    const tools = await fetch(`${api.server.url}/tools/sources`, {
      headers: { 'x-api-key': key, authorization: `Bearer ${forged}` },
    });
    expect(tools.status).toBe(401);
  });

  it('accepts an API key of 32 hex characters, and refuses it once revoked', async () => {
    const { keyId, key } = await api.apiKey(['search:read']);
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect((await search({ apiKey: key })).status).toBe(200);
    await revokeApiKey(
      api.ledger.store,
      keyId,
      commandContext({ subject: 'admin', tenant: null, via: 'cli' }),
    );
    await api.ledger.projections.waitFor(await api.ledger.store.headPosition(), { timeoutMs: 10_000 });
    expect((await search({ apiKey: key })).status).toBe(401);
  });

  it('keeps only the hash of an API key, and records its creation and revocation', async () => {
    const { keyId, key } = await api.apiKey(['config:read'], 'globex');
    const events = await api.ledger.store.readStream(`apikey-${keyId}`);
    expect(events.map((e) => e.type)).toEqual(['ApiKeyCreated']);
    expect(JSON.stringify(events.map((e) => e.data))).not.toContain(key);
    expect(events[0]!.data).toMatchObject({ scopes: ['config:read'], tenant: 'globex' });
  });

  describe('refresh tokens', () => {
    const issue = async () => {
      const jwt = await createJwtCodec(api.ledger.config.auth);
      const { accessTtlS, refreshTtlS } = api.ledger.config.auth;
      const issued = await issueTokenPair(
        { store: api.ledger.store, signer: jwt, accessTtlS, refreshTtlS },
        { subject: 'bob', tenant: 'acme', scopes: ['search:read'] },
        commandContext({ subject: 'test', tenant: null, via: 'cli' }),
      );
      // Its access token is checked against its family's read model.
      await api.ledger.projections.waitFor(await api.ledger.store.headPosition(), { timeoutMs: 10_000 });
      return issued;
    };

    it('rotates: a refresh gives a new access token and a new refresh token', async () => {
      const first = await issue();
      const refreshed = await api.call('POST', '/auth/refresh', {
        body: { refresh_token: first.refresh_token },
      });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body).toMatchObject({ expires_in: 900, token_type: 'Bearer' });
      expect(refreshed.body.refresh_token).not.toBe(first.refresh_token);
      expect((await search({ token: refreshed.body.access_token as string })).status).toBe(200);
      const again = await api.call('POST', '/auth/refresh', {
        body: { refresh_token: refreshed.body.refresh_token },
      });
      expect(again.status).toBe(200);
    });

    it('revokes the whole family when a rotated refresh token is used again', async () => {
      const first = await issue();
      const second = await api.call('POST', '/auth/refresh', {
        body: { refresh_token: first.refresh_token },
      });
      const replay = await api.call('POST', '/auth/refresh', {
        body: { refresh_token: first.refresh_token },
      });
      expect(replay.status).toBe(401);
      // The thief replayed; the owner's newer token dies with the family, with the same answer
      // once the read models know it.
      await api.ledger.projections.waitFor(await api.ledger.store.headPosition(), { timeoutMs: 10_000 });
      const owner = await api.call('POST', '/auth/refresh', {
        body: { refresh_token: second.body.refresh_token },
      });
      expect(owner.status).toBe(401);
      expect(owner.body).toMatchObject({
        error: { code: 'AUTHENTICATION_ERROR', detail: 'Refresh token revoked' },
      });
      const familyId = first.refresh_token.split('.')[1]!;
      const events = await api.ledger.store.readStream(`refresh-${familyId}`);
      expect(events.map((e) => e.type)).toEqual([
        'RefreshTokenIssued',
        'RefreshTokenRotated',
        'RefreshTokenFamilyRevoked',
      ]);
      expect(JSON.stringify(events.map((e) => e.data))).not.toContain(first.refresh_token);
    });

    it('lets only one of two concurrent uses of the same refresh token win', async () => {
      const first = await issue();
      const results = await Promise.all(
        [1, 2].map(() => api.call('POST', '/auth/refresh', { body: { refresh_token: first.refresh_token } })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
    });

    it('refuses unknown and malformed refresh tokens', async () => {
      expect(
        (
          await api.call('POST', '/auth/refresh', {
            body: { refresh_token: `rt.${crypto.randomUUID()}.abc` },
          })
        ).status,
      ).toBe(401);
      expect((await api.call('POST', '/auth/refresh', { body: { refresh_token: 'nope' } })).status).toBe(401);
      expect((await api.call('POST', '/auth/refresh', { body: {} })).status).toBe(400);
    });
  });

  it('puts the other HTTP surfaces behind the same credentials once auth is on', async () => {
    const tools = await fetch(`${api.server.url}/tools/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"x"}',
    });
    expect(tools.status).toBe(401);
    expect(await tools.json()).toMatchObject({ error: { code: 'unauthorized' } });
    const allowed = await fetch(`${api.server.url}/tools/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${api.token(['search:read'])}` },
      body: '{"query":"x"}',
    });
    expect(allowed.status).toBe(200);
    const ingest = await fetch(`${api.server.url}/tools/documents.ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${api.token(['search:read'])}` },
      body: '{}',
    });
    expect(ingest.status).toBe(403);
    const sessions = await api.call('POST', '/annotations/sessions', { body: {} });
    expect(sessions.status).toBe(401);
    expect(sessions.body).toMatchObject({ error: { code: 'AUTHENTICATION_ERROR' } });
  });

  it('runs by name on the tool API only what the catalogue offers as tools, as /api/v1 does', async () => {
    const token = api.token(['search:read', 'index:write']);
    const byName = await api.call('POST', '/operations/search.suggestions', { token, body: { q: 'an' } });
    expect(byName.status).toBe(404);
    const tool = await fetch(`${api.server.url}/tools/search.suggestions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: '{"q":"an"}',
    });
    expect(tool.status).toBe(404);
    expect(await tool.json()).toMatchObject({ error: { code: 'not_found' } });
    const list = await fetch(`${api.server.url}/tools/list`, { headers: { authorization: `Bearer ${token}` } });
    const { tools: listed } = (await list.json()) as { tools: { name: string }[] };
    expect(listed.map((t) => t.name)).toContain('context.search');
    expect(listed.map((t) => t.name)).not.toContain('search.suggestions');
  });

  it('needs no credentials for /health', async () => {
    const health = await api.call('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'healthy',
      services: { index: 'healthy', search: 'healthy', connectors: 'healthy' },
    });
    expect(ALL_SCOPES.length).toBe(8);
  });
});

describe('authentication mode auto', () => {
  it('runs open on loopback: anonymous callers work in the default project', async () => {
    const api = await startApiServer({ CTX_AUTH__MODE: 'auto' });
    try {
      const response = await api.call('POST', '/search', { body: { query: 'anything' } });
      expect(response.status).toBe(200);
    } finally {
      await api.close();
    }
  });
});
