import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, craftToken, startApiServer, type ApiServer } from './apiServer.js';
import { connectMcp } from '../support/mcp.js';

const now = () => Math.floor(Date.now() / 1000);

const errorOf = (result: unknown) => {
  const { content } = result as { content: { text: string }[] };
  return JSON.parse(content[0]!.text) as { error: { code: string; message: string } };
};

/** A folder outside the ingest roots holding one Markdown file. */
const folderWith = (file: string, text: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ctx-source-'));
  writeFileSync(path.join(dir, file), text);
  return dir;
};

describe('what only the operator may do, with authentication on', () => {
  let api: ApiServer;
  /** The operator: an admin of the default tenant. */
  let operator: string;
  let acmeAdmin: string;

  beforeAll(async () => {
    const roots = mkdtempSync(path.join(tmpdir(), 'ctx-roots-'));
    mkdirSync(path.join(roots, 'docs'));
    const handbook = folderWith('vacation.md', '# Vacation\n\nThe operator handbook grants zebra days off.\n');
    const betaNotes = folderWith('notes.md', '# Notes\n\nBeta keeps its own walrus notes.\n');
    const config = path.join(mkdtempSync(path.join(tmpdir(), 'ctx-config-')), 'ctx.toml');
    writeFileSync(
      config,
      `[sources.handbook]\nkind = "filesystem"\nroots = [${JSON.stringify(handbook)}]\n` +
        `[sources.beta-notes]\nkind = "filesystem"\nroots = [${JSON.stringify(betaNotes)}]\ntenant = "beta"\n`,
    );
    api = await startApiServer({ CTX_INGEST__ROOTS: roots }, config);
    operator = api.token(ALL_SCOPES, 'default', 'ops');
    acmeAdmin = api.token(ALL_SCOPES, 'acme', 'acme-admin');
  });
  afterAll(() => api.close());

  describe('deployment-wide settings and shared read models', () => {
    it("refuses a tenant's admin the rate limits every tenant shares, naming the operator", async () => {
      const refused = await api.call('PATCH', '/config', {
        token: acmeAdmin,
        body: { rate_limits: { search_per_minute: 1 } },
      });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: { code: 'AUTHORIZATION_ERROR' } });
      expect((refused.body.error as { detail: string }).detail).toMatch(/rate_limits\.search_per_minute .*the operator/);
      const beta = await api.call('POST', '/search', { token: api.token(['search:read'], 'beta', 'b'), body: { query: 'x' } });
      expect(beta.headers.get('x-ratelimit-limit')).not.toBe('1');
      expect((await api.call('GET', '/config', { token: operator })).body).toMatchObject({
        rate_limits: { search_per_minute: 100 },
      });
    });

    it('lets the operator change them', async () => {
      const changed = await api.call('PATCH', '/config', { token: operator, body: { rate_limits: { search_per_minute: 90 } } });
      expect(changed.status).toBe(200);
      expect(changed.body).toEqual({ updated: ['rate_limits.search_per_minute'], requires_restart: false });
      const beta = await api.call('POST', '/search', { token: api.token(['search:read'], 'beta', 'b2'), body: { query: 'x' } });
      expect(beta.headers.get('x-ratelimit-limit')).toBe('90');
      await api.call('PATCH', '/config', { token: operator, body: { rate_limits: { search_per_minute: 100 } } });
    });

    it("refuses a tenant's admin rebuilds and the projections' checkpoints, over REST and MCP", async () => {
      const rebuild = await api.call('POST', '/projections/keyword/rebuild', { token: acmeAdmin });
      expect(rebuild.status).toBe(403);
      expect(rebuild.body).toMatchObject({ error: { code: 'AUTHORIZATION_ERROR' } });
      expect((rebuild.body.error as { detail: string }).detail).toContain("an 'admin' key or token of the 'default' tenant");
      const status = await api.call('GET', '/projections', { token: acmeAdmin });
      expect(status.status).toBe(403);
      const byName = await api.call('POST', '/operations/projections.status', { token: acmeAdmin, body: {} });
      expect(byName.status).toBe(403);

      const { key } = await api.apiKey(['admin'], 'acme');
      const mcp = await connectMcp(api.server.url, { 'x-api-key': key });
      try {
        const result = await mcp.callTool({ name: 'projections.status', arguments: {} });
        expect(result.isError).toBe(true);
        expect(errorOf(result).error).toMatchObject({ code: 'AUTHORIZATION_ERROR' });
      } finally {
        await mcp.close();
      }

      const allowed = await api.call('GET', '/projections', { token: operator });
      expect(allowed.status).toBe(200);
      expect((allowed.body.projections as { name: string }[]).map((p) => p.name)).toContain('keyword');
    });
  });

  describe('token families', () => {
    const pairOf = (body: Record<string, unknown>) =>
      body as { access_token: string; refresh_token: string; family_id: string };
    const search = (token: string) => api.call('POST', '/search', { token, body: { query: 'anything' } });
    const refresh = (refreshToken: string) => api.call('POST', '/auth/refresh', { body: { refresh_token: refreshToken } });

    it('revokes the tokens a key issued, and the tokens those issued, with the key', async () => {
      const { keyId, key } = await api.apiKey(['admin', 'search:read'], 'acme');
      const issued = await api.call('POST', '/operations/tokens.issue', {
        apiKey: key,
        body: { subject: `apikey:${keyId}`, scopes: ['admin', 'search:read'], tenant: 'acme' },
      });
      expect(issued.status).toBe(200);
      const first = pairOf(issued.body);
      const second = pairOf(
        (
          await api.call('POST', '/operations/tokens.issue', {
            token: first.access_token,
            body: { subject: `apikey:${keyId}`, scopes: ['search:read'], tenant: 'acme' },
          })
        ).body,
      );
      expect((await search(first.access_token)).status).toBe(200);
      expect((await search(second.access_token)).status).toBe(200);

      const revoked = await api.call('POST', '/operations/keys.revoke', { token: acmeAdmin, body: { key_id: keyId } });
      expect(revoked.status).toBe(200);

      expect((await api.call('POST', '/search', { apiKey: key, body: { query: 'x' } })).status).toBe(401);
      const access = await search(first.access_token);
      expect(access.status).toBe(401);
      expect(access.body).toMatchObject({
        error: { code: 'AUTHENTICATION_ERROR', detail: 'Token refused: the API key that issued it was revoked' },
      });
      expect((await search(second.access_token)).status).toBe(401);
      const refreshed = await refresh(first.refresh_token);
      expect(refreshed.status).toBe(401);
      const issuerRevoked = 'Refresh token refused: the API key that issued it was revoked';
      expect(refreshed.body).toMatchObject({ error: { code: 'AUTHENTICATION_ERROR', detail: issuerRevoked } });
      const refreshedSecond = await refresh(second.refresh_token);
      expect(refreshedSecond.status).toBe(401);
      expect(refreshedSecond.body).toMatchObject({ error: { code: 'AUTHENTICATION_ERROR', detail: issuerRevoked } });
    });

    it('revokes a family with tokens.revoke, over REST and MCP, within its tenant', async () => {
      const issue = async () =>
        pairOf(
          (
            await api.call('POST', '/operations/tokens.issue', {
              token: operator,
              body: { subject: 'ci-bot', scopes: ['search:read'], tenant: 'acme' },
            })
          ).body,
        );
      const rest = await issue();
      expect((await search(rest.access_token)).status).toBe(200);
      const foreign = await api.call('POST', '/operations/tokens.revoke', {
        token: api.token(['admin'], 'globex', 'globex-admin'),
        body: { family_id: rest.family_id },
      });
      expect(foreign.status).toBe(403);
      expect((await search(rest.access_token)).status).toBe(200);
      const revoked = await api.call('POST', '/operations/tokens.revoke', {
        token: acmeAdmin,
        body: { family_id: rest.family_id, reason: 'leaked in a log' },
      });
      expect(revoked.status).toBe(200);
      expect(revoked.body).toEqual({ family_id: rest.family_id, revoked: true });
      expect((await search(rest.access_token)).status).toBe(401);
      expect((await refresh(rest.refresh_token)).status).toBe(401);

      const viaMcp = await issue();
      const { key } = await api.apiKey(['admin'], 'acme');
      const mcp = await connectMcp(api.server.url, { 'x-api-key': key });
      try {
        const result = await mcp.callTool({ name: 'tokens.revoke', arguments: { family_id: viaMcp.family_id } });
        expect(result.isError).toBeFalsy();
      } finally {
        await mcp.close();
      }
      expect((await search(viaMcp.access_token)).status).toBe(401);
      expect((await refresh(viaMcp.refresh_token)).status).toBe(401);
    });

    it("issues a tenant's admin tokens for itself only; the operator for any subject", async () => {
      const spoofed = await api.call('POST', '/operations/tokens.issue', {
        token: acmeAdmin,
        body: { subject: 'someone-else', scopes: ['search:read'], tenant: 'acme' },
      });
      expect(spoofed.status).toBe(403);
      expect(spoofed.body).toMatchObject({ error: { code: 'AUTHORIZATION_ERROR' } });
      expect((spoofed.body.error as { detail: string }).detail).toContain("your own ('acme-admin')");
      const own = await api.call('POST', '/operations/tokens.issue', {
        token: acmeAdmin,
        body: { subject: 'acme-admin', scopes: ['search:read'], tenant: 'acme' },
      });
      expect(own.status).toBe(200);
      const forBot = await api.call('POST', '/operations/tokens.issue', {
        token: operator,
        body: { subject: 'ci-bot', scopes: ['search:read'], tenant: 'acme' },
      });
      expect(forBot.status).toBe(200);
    });
  });

  it.each([
    ['iss', { aud: 'api' }],
    ['aud', { iss: 'context-engine' }],
  ])('refuses a token without %s', async (_claim, claims) => {
    const token = craftToken({ ...claims, sub: 'mallory', scope: 'search:read', tenant_id: 'acme', exp: now() + 600 });
    const response = await api.call('POST', '/search', { token, body: { query: 'x' } });
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({
      error: { code: 'AUTHENTICATION_ERROR', detail: 'Token lacks a required claim: iss, aud, exp and sub are required' },
    });
  });

  it("records a key's creation in the key's tenant: another tenant's audit does not list it", async () => {
    const { keyId } = await api.apiKey(['search:read'], 'acme');
    const listed = async (token: string) => {
      const { body } = await api.call('GET', '/audit/events?type=ApiKeyCreated&limit=500', { token });
      return (body.events as { data: { keyId: string } }[]).map((e) => e.data.keyId);
    };
    expect(await listed(operator)).not.toContain(keyId);
    expect(await listed(acmeAdmin)).toContain(keyId);
  });

  describe('configured sources', () => {
    const tools = async (route: string, token: string, body?: unknown) => {
      const response = await fetch(`${api.server.url}${route}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const names = (body: Record<string, unknown>) => (body.sources as { name: string }[]).map((s) => s.name);
    const beta = () => api.token(['search:read', 'index:write'], 'beta', 'beta-writer');

    it("neither lists nor ingests the operator's sources for a tenant", async () => {
      const listed = await tools('/tools/sources', beta());
      expect(listed.status).toBe(200);
      expect(names(listed.body)).not.toContain('filesystem:handbook');
      const ingest = await tools('/tools/documents.ingest', beta(), { source: 'filesystem:handbook' });
      expect(ingest.status).toBe(404);
      expect(ingest.body).toEqual({ error: { code: 'not_found', message: "No configured source 'filesystem:handbook'" } });
      const search = await tools('/tools/search', beta(), { query: 'zebra', mode: 'keyword' });
      expect(search.body.results).toEqual([]);
    });

    it('lets a tenant ingest the sources configured for it, and the operator its own', async () => {
      expect(names((await tools('/tools/sources', beta())).body)).toContain('filesystem:beta-notes');
      const ingest = await tools('/tools/documents.ingest', beta(), { source: 'filesystem:beta-notes' });
      expect(ingest.status).toBe(200);
      expect(ingest.body).toMatchObject({ result: { created: 1 } });
      const operatorSources = names((await tools('/tools/sources', operator)).body);
      expect(operatorSources).toContain('filesystem:handbook');
      expect(operatorSources).not.toContain('filesystem:beta-notes');
      const own = await tools('/tools/documents.ingest', operator, { source: 'filesystem:handbook' });
      expect(own.status).toBe(200);
    });
  });
});

describe('the operations route with authentication off', () => {
  let api: ApiServer;
  beforeAll(async () => {
    api = await startApiServer({ CTX_AUTH__MODE: 'off' });
  });
  afterAll(() => api.close());

  it('forgets within the default tenant, as POST /forget does', async () => {
    const named = await api.call('POST', '/forget', { body: { subject: 'bob' } });
    expect(named.status).toBe(200);
    expect(named.body).toMatchObject({ forgotten: 'subject', tenant: 'default' });
    const generic = await api.call('POST', '/operations/ledger.forget', { body: { subject: 'bob' } });
    expect(generic.status).toBe(200);
    expect(generic.body).toMatchObject({ forgotten: 'subject', tenant: 'default' });
  });
});
