import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../support/ledger.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from '../api/apiServer.js';
import { startGitHubStandIn, type GitHubStandIn } from './githubStandIn.js';
import { jobOutcome, startSync } from './syncSupport.js';

/** A server on loopback standing for an internal service: it records every request and answers what `answer` says. */
interface Listener {
  url: string;
  port: number;
  requests: { method: string; path: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

const listen = async (answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listener> => {
  const requests: Listener['requests'] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization });
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

const SECRET = 'INTERNAL-ONLY-200: metadata token=abc123';
const internal = () =>
  listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(SECRET);
  });

const lastErrorOf = async (api: ApiServer, token: string, id: string) =>
  ((await api.call('GET', `/connectors/${id}`, { token })).body.stats as { last_error: string | null }).last_error;

describe('remote connectors under the default policy: only the services’ public hosts', () => {
  let api: ApiServer;
  let token: string;
  let secret: Listener;

  beforeAll(async () => {
    secret = await internal();
    api = await startApiServer();
    token = api.token(ALL_SCOPES, 'acme');
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await secret?.close();
  });

  // A subject of its own for each call: adding connectors is rate-limited per caller.
  const add = (type: string, config: Record<string, unknown>) =>
    api.call('POST', '/connectors', {
      token: api.token(ALL_SCOPES, 'acme', crypto.randomUUID()),
      body: { type, name: `${type}-${crypto.randomUUID()}`, config },
    });

  it('refuses a GitHub api_url on a loopback listener, with a fragment cutting off its path, and the listener hears nothing', async () => {
    const added = await add('github', { repository: 'o/r', token: 'ghp_X', api_url: `${secret.url}/secret200#` });
    expect(added.status).toBe(400);
    expect(added.body).toMatchObject({
      error: {
        code: 'VALIDATION_ERROR',
        detail: 'Connector setting config.api_url must not have a fragment (#)',
        correlation_id: expect.any(String) as unknown,
      },
    });
    const listed = await api.call('GET', '/connectors', { token });
    expect(listed.body.connectors).toEqual([]);
    expect(secret.requests).toEqual([]);
  });

  it.each([
    ['github', { repository: 'o/r', api_url: 'LOOPBACK/' }, 'api_url'],
    ['jira', { url: 'LOOPBACK', email: 'a@b.c', token: 't', project: 'X' }, 'url'],
    ['slack', { channels: ['dev'], api_url: 'LOOPBACK/api/' }, 'api_url'],
    ['s3', { bucket: 'b', endpoint: 'LOOPBACK' }, 'endpoint'],
  ])('refuses a %s connector naming a loopback server', async (type, config, field) => {
    const named = Object.fromEntries(Object.entries(config).map(([k, v]) => [k, typeof v === 'string' ? v.replace('LOOPBACK', secret.url) : v]));
    const added = await add(type, named);
    expect(added.status).toBe(400);
    expect(added.body).toMatchObject({ error: { code: 'VALIDATION_ERROR', detail: expect.stringContaining(`config.${field}`) as unknown } });
    expect(secret.requests).toEqual([]);
  });

  it.each([
    ['a private address', 'http://10.1.2.3/api/v3'],
    ['the link-local metadata address', 'http://169.254.169.254/latest'],
    ['an IPv6 loopback', 'http://[::1]:8080/'],
    ['an IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/'],
    ['loopback spelled as a number', 'http://2130706433/'],
    ['a host that is not GitHub', 'https://github.example.com/api/v3'],
    ['GitHub over plain http', 'http://api.github.com'],
    ['GitHub on another port', 'https://api.github.com:8443'],
  ])('refuses %s', async (_what, apiUrl) => {
    const added = await add('github', { repository: 'o/r', api_url: apiUrl });
    expect(added.status, JSON.stringify(added.body)).toBe(400);
    expect(added.body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
  });

  it('accepts the services’ public hosts', async () => {
    for (const [type, config] of [
      ['github', { repository: 'o/r', api_url: 'https://api.github.com' }],
      ['jira', { url: 'https://acme.atlassian.net', project: 'X' }],
      ['slack', { channels: ['dev'], api_url: 'https://slack.com/api/' }],
      ['s3', { bucket: 'b', endpoint: 'https://s3.eu-west-1.amazonaws.com' }],
    ] as const) {
      const added = await add(type, config);
      expect(added.status, `${type}: ${JSON.stringify(added.body)}`).toBe(201);
    }
  });

  it('refuses a changed config naming a loopback server, and keeps the one stored', async () => {
    const added = await add('jira', { url: 'https://acme.atlassian.net', project: 'X' });
    const id = added.body.id as string;
    const changed = await api.call('PUT', `/connectors/${id}`, { token, body: { config: { url: `${secret.url}/x#`, token: 't', project: 'X' } } });
    expect(changed.status).toBe(400);
    expect(changed.body).toMatchObject({ error: { code: 'VALIDATION_ERROR', detail: expect.stringContaining('config.url') as unknown } });
    expect((await api.call('GET', `/connectors/${id}`, { token })).body).toMatchObject({ config: { url: 'https://acme.atlassian.net' } });
  });

  it('over MCP, connector_management answers an error result and adds nothing', async () => {
    const mcp = new Client({ name: 'endpoint-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    try {
      const result = (await mcp.callTool({
        name: 'context.connector_management',
        arguments: { action: 'add', connector_config: { type: 'github', name: 'mcp-gh', config: { repository: 'o/r', api_url: `${secret.url}/secret200#` } } },
      })) as { isError?: boolean; content: { text: string }[] };
      expect(result.isError).toBe(true);
      expect(JSON.parse(result.content[0]!.text)).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
      expect(result.content[0]!.text).toContain('api_url');
    } finally {
      await mcp.close();
    }
    expect(secret.requests).toEqual([]);
  });
});

describe('remote connectors under an operator allowlist', () => {
  let api: ApiServer;
  let token: string;
  let github: GitHubStandIn;
  let other: Listener;
  let redirecting: Listener;

  beforeAll(async () => {
    github = await startGitHubStandIn('acme/widgets');
    github.issues.set(1, {
      number: 1,
      title: 'Binary paste',
      body: 'A log line with a NUL \u0000 in it',
      user: 'octocat',
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-02T00:00:00Z',
    });
    github.issues.set(2, { number: 2, title: 'Plain', body: 'Nothing odd', user: 'octocat', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-03T00:00:00Z' });
    other = await internal();
    redirecting = await listen((req, res) => {
      const target = req.url?.startsWith('/moved/') ? `/repos/acme/widgets/issues?${new URL(req.url, 'http://x').searchParams}` : null;
      if (req.url?.startsWith('/away/')) {
        res.writeHead(302, { location: `${other.url}/secret200` });
        res.end('moved');
      } else if (target) {
        res.writeHead(301, { location: target });
        res.end();
      } else if (req.url?.startsWith('/repos/acme/widgets/issues')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('[]');
      } else if (req.url?.startsWith('/jira-mixed/')) {
        // The second issue's key is longer than any document id may be: the ledger refuses that one item.
        const fields = { summary: 'Fine', created: '2026-01-01T00:00:00.000+0000', updated: '2026-01-02T00:00:00.000+0000' };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ startAt: 0, total: 2, issues: [{ key: 'OK-1', fields }, { key: `LONG-${'9'.repeat(2100)}`, fields }] }));
      } else if (req.url?.startsWith('/jira-broken/')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ startAt: 0, total: 3, issues: 'INTERNAL-ONLY-JIRA' }));
      } else {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('INTERNAL-ONLY-500: password=hunter2');
      }
    });
    // The setting in a ctx.toml file, as an operator writes it.
    const dir = mkdtempSync(path.join(tmpdir(), 'ctx-endpoints-'));
    const file = path.join(dir, 'ctx.toml');
    writeFileSync(file, '[connectors]\nallowed_hosts = ["127.0.0.1"]\nallow_private_addresses = true\n');
    api = await startApiServer({}, file);
    token = api.token(ALL_SCOPES, 'acme');
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await github?.close();
    await other?.close();
    await redirecting?.close();
  });

  const addGitHub = async (apiUrl: string) => {
    const added = await api.call('POST', '/connectors', {
      token,
      body: { type: 'github', name: `gh-${crypto.randomUUID()}`, config: { repository: 'acme/widgets', token: 'ghp_valid', api_url: apiUrl } },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    return added.body.id as string;
  };

  it('lets a connector reach an allowed host, and repairs an item holding a NUL rather than failing the sync', async () => {
    const id = await addGitHub(github.url);
    const outcome = await jobOutcome(api, await startSync(api, token, id));
    expect(outcome.status, outcome.error_message).toBe('completed');
    const { items } = await api.ledger.readModels.find<{ sourceId: string; title: string; metadata: Record<string, unknown> }>('documents', {
      where: { project: 'acme' },
      limit: 100,
    });
    const synced = new Map(items.map((d) => [d.sourceId, d]));
    expect([...synced.keys()].sort()).toEqual(['issues/1', 'issues/2']);
    expect(synced.get('issues/1')!.metadata).toMatchObject({ text_repaired: true });
    expect(synced.get('issues/2')!.metadata.text_repaired).toBeUndefined();
    const found = await api.call('POST', '/search', { token, body: { query: 'log line NUL' } });
    const hit = (found.body.results as { content: string; metadata: { path: string } }[]).find((r) => r.metadata.path === 'issues/1');
    expect(hit?.content).toContain('NUL \ufffd in it');
  }, 60_000);

  it('still refuses a user name and password, a fragment or a query in an allowed host’s URL', async () => {
    for (const apiUrl of [`http://user:pass@127.0.0.1:${other.port}/`, `${other.url}/secret200#`, `${other.url}/secret200?`]) {
      const added = await api.call('POST', '/connectors', { token, body: { type: 'github', name: 'bad', config: { repository: 'o/r', api_url: apiUrl } } });
      expect(added.status, apiUrl).toBe(400);
      expect(added.body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    }
    expect(other.requests).toEqual([]);
  });

  it('follows a redirect within the origin, but not one to another origin', async () => {
    const moved = await addGitHub(`${redirecting.url}/moved`);
    const followed = await jobOutcome(api, await startSync(api, token, moved));
    expect(followed.status, followed.error_message).toBe('completed');

    const away = await addGitHub(`${redirecting.url}/away`);
    const outcome = await jobOutcome(api, await startSync(api, token, away));
    expect(outcome).toMatchObject({ status: 'failed', error_type: 'connector_error' });
    expect(outcome.error_message).toContain('redirected to another origin (HTTP 302)');
    expect(other.requests).toEqual([]);
    const lastError = await lastErrorOf(api, token, away);
    expect(lastError).toContain('HTTP 302');
    expect(lastError).not.toContain('INTERNAL-ONLY');
  }, 60_000);

  it('keeps only the status of an answer, never its body, in the job and last_error', async () => {
    const id = await addGitHub(`${redirecting.url}/failing`);
    const outcome = await jobOutcome(api, await startSync(api, token, id));
    expect(outcome).toMatchObject({ status: 'failed', error_message: 'GitHub request failed (HTTP 500)' });
    expect(await lastErrorOf(api, token, id)).toBe('GitHub request failed (HTTP 500)');
    expect(redirecting.requests.some((r) => r.path.startsWith('/failing/') && r.authorization === 'token ghp_valid')).toBe(true);

    const jira = await api.call('POST', '/connectors', {
      token,
      body: { type: 'jira', name: 'jira-500', config: { url: `${redirecting.url}/failing`, email: 'a@b.c', token: 't', project: 'X' } },
    });
    const failed = await jobOutcome(api, await startSync(api, token, jira.body.id as string));
    expect(failed).toMatchObject({ status: 'failed', error_message: 'Jira request failed (HTTP 500)' });
  }, 60_000);

  it('skips an item the ledger refuses, syncs the rest, and says so in the job', async () => {
    const jira = await api.call('POST', '/connectors', {
      token,
      body: { type: 'jira', name: 'jira-mixed', config: { url: `${redirecting.url}/jira-mixed`, token: 't', project: 'X' } },
    });
    const outcome = await jobOutcome(api, await startSync(api, token, jira.body.id as string));
    expect(outcome).toMatchObject({ status: 'completed', progress_message: expect.stringContaining('1 of 2') as unknown });
    const { items } = await api.ledger.readModels.find<{ sourceId: string }>('documents', { where: { project: 'acme', source: 'jira:jira-mixed' }, limit: 10 });
    expect(items.map((d) => d.sourceId)).toEqual(['OK-1']);
  }, 60_000);

  it('fails a Jira sync with a clear error when the answer is not a page of search results', async () => {
    const jira = await api.call('POST', '/connectors', {
      token,
      body: { type: 'jira', name: 'jira-broken', config: { url: `${redirecting.url}/jira-broken`, token: 't', project: 'X' } },
    });
    const outcome = await jobOutcome(api, await startSync(api, token, jira.body.id as string));
    expect(outcome).toMatchObject({
      status: 'failed',
      error_type: 'connector_error',
      error_message: 'Jira answered with something that is not a page of search results (HTTP 200)',
    });
    expect((await api.call('GET', '/health', {})).status).toBe(200);
  }, 60_000);
});

describe('a stored connector the policy no longer allows', () => {
  let listener: Listener;
  const dataDir = tempDataDir('ctx-endpoints-');
  let githubId: string;
  let s3Id: string;

  beforeAll(async () => {
    listener = await internal();
    // Added while the operator allowed loopback under the name localhost.
    const api = await startApiServer({ CTX_CONNECTORS__ALLOWED_HOSTS: 'localhost', CTX_CONNECTORS__ALLOW_PRIVATE_ADDRESSES: 'true' }, undefined, dataDir);
    const token = api.token(ALL_SCOPES, 'acme');
    const add = async (type: string, config: Record<string, unknown>) => {
      const added = await api.call('POST', '/connectors', { token, body: { type, name: type, config } });
      expect(added.status, JSON.stringify(added.body)).toBe(201);
      return added.body.id as string;
    };
    githubId = await add('github', { repository: 'o/r', token: 'ghp_X', api_url: `http://localhost:${listener.port}/secret200` });
    s3Id = await add('s3', { bucket: 'b', endpoint: `http://localhost:${listener.port}`, access_key_id: 'k', secret_access_key: 's' });
    await api.close();
  }, 60_000);
  afterAll(() => listener?.close());

  it('refuses at connection a name that resolves to a loopback address, and sends nothing', async () => {
    const api = await startApiServer({ CTX_CONNECTORS__ALLOWED_HOSTS: 'localhost' }, undefined, dataDir);
    try {
      const token = api.token(ALL_SCOPES, 'acme');
      for (const id of [githubId, s3Id]) {
        const outcome = await jobOutcome(api, await startSync(api, token, id));
        expect(outcome).toMatchObject({ status: 'failed', error_type: 'NOT_CONFIGURED' });
        expect(outcome.error_message).toContain('localhost resolves to 127.0.0.1');
        expect(await lastErrorOf(api, token, id)).not.toContain('INTERNAL-ONLY');
      }
      // A new connector naming it is refused when added.
      const added = await api.call('POST', '/connectors', {
        token,
        body: { type: 'github', name: 'again', config: { repository: 'o/r', api_url: `http://localhost:${listener.port}/` } },
      });
      expect(added.status).toBe(400);
      expect(added.body).toMatchObject({ error: { code: 'VALIDATION_ERROR', detail: expect.stringContaining('resolves to 127.0.0.1') as unknown } });
    } finally {
      await api.close();
    }
    expect(listener.requests).toEqual([]);
  }, 60_000);

  it('refuses to start the sync of a connector whose host is no longer allowed', async () => {
    const api = await startApiServer({}, undefined, dataDir);
    try {
      const token = api.token(ALL_SCOPES, 'acme');
      const refused = await api.call('POST', `/connectors/${githubId}/sync`, { token });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: { code: 'NOT_CONFIGURED', detail: expect.stringContaining("'api_url'") as unknown } });
    } finally {
      await api.close();
    }
    expect(listener.requests).toEqual([]);
  }, 60_000);
});
