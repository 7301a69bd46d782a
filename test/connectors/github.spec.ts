import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/domain/events.js';
import { ALL_SCOPES, ingest, startApiServer, type ApiServer } from '../api/apiServer.js';
import { startGitHubStandIn, type GitHubStandIn, type StandInIssue } from './githubStandIn.js';
import { eventsSince, itWithService, jobOutcome, LOOPBACK_SERVICES, startSync } from './syncSupport.js';

const issue = (number: number, updated: string, extra: Partial<StandInIssue> = {}): StandInIssue => ({
  number,
  title: `Issue ${number}`,
  body: `Body of issue ${number}`,
  user: 'octocat',
  created_at: '2026-01-01T00:00:00Z',
  updated_at: updated,
  ...extra,
});

const sourceIdsOf = (events: StoredEvent[], type: string) =>
  events
    .filter((e) => e.type === type)
    .map((e) => (e.data as { sourceId?: string; documentId: string }).sourceId ?? (e.data as { documentId: string }).documentId)
    .sort();

describe('GitHub connector against a local stand-in of the REST API', () => {
  let api: ApiServer;
  let github: GitHubStandIn;
  let token: string;
  let connectorId: string;
  const issuesListings = () => github.requests.filter((r) => r.path.endsWith('/issues'));

  const connector = async () => (await api.call('GET', `/connectors/${connectorId}`, { token })).body;
  const documentIdsBySource = async () => {
    const { items } = await api.ledger.readModels.find<{ id: string; sourceId: string; source: string }>('documents', {
      where: { project: 'acme', source: 'github:Widgets' },
      limit: 1000,
    });
    return new Map(items.map((d) => [d.sourceId, d.id]));
  };

  beforeAll(async () => {
    github = await startGitHubStandIn('acme/widgets');
    github.issues.set(1, issue(1, '2026-02-01T10:00:00Z', { title: 'Login fails with SSO', body: 'Users cannot sign in; see src/auth/login.ts and AUTH-42.', labels: ['bug'] }));
    github.issues.set(
      2,
      issue(2, '2026-02-02T10:00:00Z', {
        pull: true,
        title: 'Fix SSO redirect in login',
        body: 'Fixes #1 (AUTH-42).',
        user: 'hubot',
        reviewComments: [
          { user: 'monalisa', path: 'src/auth/login.ts', line: 12, body: 'Check the redirect origin here.', created_at: '2026-02-02T09:00:00Z' },
        ],
      }),
    );
    github.issues.set(3, issue(3, '2026-02-03T10:00:00Z', { title: 'Document the widget cache' }));
    api = await startApiServer(LOOPBACK_SERVICES);
    token = api.token(ALL_SCOPES, 'acme');
    const added = await api.call('POST', '/connectors', {
      token,
      body: {
        type: 'github',
        name: 'Widgets',
        config: { repository: 'acme/widgets', include_issues: true, include_prs: true, token: 'ghp_valid', api_url: github.url, page_size: 2 },
      },
    });
    expect(added.status).toBe(201);
    connectorId = added.body.id as string;
    await ingest(api, 'acme', [{ source_id: 'src/auth/login.ts', title: 'login.ts', body: 'export function login() { /* sso redirect */ }' }]);
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await github?.close();
  });

  it('syncs issues and pull requests with review comments, paging to the end through a rate limit', async () => {
    // GitHub's secondary rate limit on the first request: the connector waits as told, then goes on.
    github.rateLimitNext((r) => r.path.endsWith('/issues') && !r.query.page, 1);
    const jobId = await startSync(api, token, connectorId);
    expect((await jobOutcome(api, jobId)).status).toBe('completed');

    const firstPage = issuesListings().filter((r) => !r.query.page && !r.query.since);
    expect(firstPage.length).toBeGreaterThanOrEqual(2);
    expect(issuesListings().some((r) => r.query.page === '2')).toBe(true);
    const details = await connector();
    expect(details).toMatchObject({ status: 'active', stats: { documents_indexed: 3, last_error: null } });
    expect(Date.parse(details.last_sync as string)).not.toBeNaN();
    // The configured token is still never shown.
    expect(JSON.stringify(details)).not.toContain('ghp_valid');

    const pull = await api.ledger.readModels.get<Record<string, unknown>>('documents', (await documentIdsBySource()).get('pulls/2')!);
    expect(pull).toMatchObject({
      source: 'github:Widgets',
      sourceUrl: 'https://github.com/acme/widgets/pull/2',
      author: 'hubot',
      createdAt: '2026-01-01T00:00:00Z',
      updatedAt: '2026-02-02T10:00:00Z',
      metadata: expect.objectContaining({ kind: 'pull_request', source_type: 'github', number: 2 }) as unknown,
    });
  }, 60_000);

  it('a second sync appends exactly what changed, removes what was deleted, and advances the cursor', async () => {
    const before = await api.ledger.store.headPosition();
    github.issues.set(3, { ...github.issues.get(3)!, body: 'The widget cache now expires after an hour.', updated_at: '2026-03-01T10:00:00Z' });
    github.issues.set(4, issue(4, '2026-03-02T10:00:00Z', { title: 'Widget export to CSV' }));
    github.issues.delete(1);
    const removedId = (await documentIdsBySource()).get('issues/1');
    const listingsBefore = issuesListings().length;

    const jobId = await startSync(api, token, connectorId);
    expect((await jobOutcome(api, jobId)).status).toBe('completed');

    const docEvents = await eventsSince(api, before, 'doc');
    expect(sourceIdsOf(docEvents, 'DocumentIngested')).toEqual(['issues/3', 'issues/4']);
    expect(sourceIdsOf(docEvents, 'DocumentRemoved')).toEqual([removedId]);
    // The incremental request asked only for what changed since the first sync's cursor.
    const incremental = issuesListings().slice(listingsBefore).find((r) => r.query.since);
    expect(incremental?.query.since).toBe('2026-02-03T10:00:00Z');
    const completed = (await eventsSince(api, before, 'connector')).filter((e) => e.type === 'ConnectorSyncCompleted');
    expect(completed.map((e) => (e.data as { cursor: unknown }).cursor)).toEqual([{ since: '2026-03-02T10:00:00Z' }]);
    expect(await connector()).toMatchObject({ status: 'active', stats: { documents_indexed: 3 } });
  }, 60_000);

  it('POST /index/start naming the connector syncs it as a job', async () => {
    const listingsBefore = issuesListings().length;
    const started = await api.call('POST', '/index/start', { token, body: { connectors: ['Widgets'] } });
    expect(started.status).toBe(202);
    const jobId = started.body.job_id as string;
    expect((await jobOutcome(api, jobId)).status).toBe('completed');
    expect(issuesListings().length).toBeGreaterThan(listingsBefore);
    expect(await connector()).toMatchObject({ status: 'active', stats: { documents_indexed: 3 } });
  }, 60_000);

  it('filters by source_types and links a file to its pull requests, through REST and MCP', async () => {
    const github_ = await api.call('POST', '/search', { token, body: { query: 'login redirect', filters: { source_types: ['github'] } } });
    expect(github_.status).toBe(200);
    const results = github_.body.results as { source: string; metadata: { source_type: string; path: string } }[];
    expect(results.map((r) => r.metadata.path)).toContain('pulls/2');
    expect(results.every((r) => r.metadata.source_type === 'github')).toBe(true);
    expect(results.find((r) => r.metadata.path === 'pulls/2')?.source).toBe('https://github.com/acme/widgets/pull/2');
    const files = await api.call('POST', '/search', { token, body: { query: 'login redirect', filters: { source_types: ['file'] } } });
    expect((files.body.results as { metadata: { source_type: string } }[]).map((r) => r.metadata.source_type)).toEqual(['file']);

    const related = await api.call('POST', '/operations/context.get_related_info', { token, body: { file_path: 'src/auth/login.ts' } });
    expect(related.status, JSON.stringify(related.body)).toBe(200);
    const relatedDocs = (related.body as { documents: { source: string; path: string; relation: string }[] }).documents;
    expect(relatedDocs).toContainEqual(expect.objectContaining({ source: 'github:Widgets', path: 'pulls/2', relation: 'mentions' }));

    const client = new Client({ name: 'connectors-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const searched = await client.callTool({
        name: 'context.search',
        arguments: { query: 'widget cache', filters: { source_types: ['github'] } },
      });
      expect(searched.isError).toBeFalsy();
      expect(JSON.stringify(searched.content)).toContain('issues/3');
      const mcpRelated = await client.callTool({ name: 'context.get_related_info', arguments: { file_path: 'src/auth/login.ts' } });
      expect(mcpRelated.isError).toBeFalsy();
      expect(JSON.stringify(mcpRelated.content)).toContain('pulls/2');
    } finally {
      await client.close();
    }
  }, 60_000);

  it('rebuilds the read models from the events alone, with no call to GitHub', async () => {
    const snapshot = async () => ({
      connector: await connector(),
      documents: [...(await documentIdsBySource()).entries()].sort(),
      search: (await api.call('POST', '/search', { token, body: { query: 'widget login cache', filters: { source_types: ['github'] } } })).body.results,
    });
    const before = await snapshot();
    const calls = github.requests.length;
    // Projections are shared by every tenant: the operator rebuilds them.
    const operator = api.token(ALL_SCOPES, 'default');
    for (const name of ['documents', 'keyword', 'connectors']) {
      const started = await api.call('POST', `/projections/${name}/rebuild`, { token: operator });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      for (;;) {
        const { projections } = (await api.call('GET', '/projections', { token: operator })).body as {
          projections: { name: string; state: string }[];
        };
        if (projections.find((p) => p.name === name)?.state !== 'rebuilding') break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    expect(await snapshot()).toEqual(before);
    expect(github.requests.length).toBe(calls);
  }, 120_000);

  it('a sync cancelled halfway keeps what it wrote and the next one resumes from its cursor', async () => {
    for (const n of [5, 6, 7, 8]) github.issues.set(n, issue(n, `2026-04-0${n - 4}T10:00:00Z`, { title: `Roadmap item ${n}` }));
    const listingsBefore = issuesListings().length;
    // Page 1 holds item 4 again (the cursor's own time) and item 5; page 2 waits until the job is cancelled.
    const held = github.hold((r) => r.path.endsWith('/issues') && r.query.page === '2' && r.query.since === '2026-03-02T10:00:00Z');
    const jobId = await startSync(api, token, connectorId);
    await held.arrived;
    const stopped = await api.call('POST', '/index/stop', { token });
    expect(stopped.body).toMatchObject({ status: 'stopping', job_ids: [jobId] });
    held.release();
    expect((await jobOutcome(api, jobId)).status).toBe('cancelled');

    const kept = await documentIdsBySource();
    expect(kept.has('issues/5')).toBe(true);
    expect(['issues/6', 'issues/7', 'issues/8'].filter((id) => kept.has(id))).toEqual([]);

    const resumed = await startSync(api, token, connectorId);
    expect((await jobOutcome(api, resumed)).status).toBe('completed');
    const resumedFrom = issuesListings().slice(listingsBefore).filter((r) => !r.query.page && r.query.since).map((r) => r.query.since);
    expect(resumedFrom).toEqual(['2026-03-02T10:00:00Z', '2026-04-01T10:00:00Z']);
    const all = await documentIdsBySource();
    expect([...all.keys()].sort()).toEqual(['issues/3', 'issues/4', 'issues/5', 'issues/6', 'issues/7', 'issues/8', 'pulls/2']);
  }, 60_000);

  it('reports an expired token as a connector error, keeps what was synced, and the server goes on', async () => {
    const documents = await documentIdsBySource();
    github.tokens.clear();
    const jobId = await startSync(api, token, connectorId);
    const outcome = await jobOutcome(api, jobId);
    expect(outcome).toMatchObject({ status: 'failed', error_type: 'connector_access_denied' });
    expect(outcome.error_message).toContain('GitHub refused the token (401');
    const details = await connector();
    expect(details.status).toBe('error');
    // The status says what happened; the answer's body (GitHub's 'Bad credentials') is never copied.
    expect((details.stats as { last_error: string }).last_error).toBe('GitHub refused the token (401); give the connector a valid token');
    expect(await documentIdsBySource()).toEqual(documents);
    expect((await api.call('GET', '/health', {})).status).toBe(200);
    github.tokens.add('ghp_valid');
  }, 60_000);

  it('refuses to sync a connector missing a setting, saying which', async () => {
    const added = await api.call('POST', '/connectors', { token, body: { type: 'github', name: 'Nameless', config: {} } });
    const refused = await api.call('POST', `/connectors/${added.body.id as string}/sync`, { token });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error: { code: 'NOT_CONFIGURED', detail: expect.stringContaining("needs the 'repository' setting") as unknown },
    });
  });
});

itWithService(['GITHUB_TOKEN'], 'GitHub connector against the real service', async () => {
  const api = await startApiServer();
  try {
    const token = api.token(ALL_SCOPES, 'acme');
    const added = await api.call('POST', '/connectors', {
      token,
      body: {
        type: 'github',
        name: 'Real repository',
        // A small public repository unless another is named.
        config: { repository: process.env.GITHUB_REPOSITORY ?? 'octocat/git-consortium', token: process.env.GITHUB_TOKEN },
      },
    });
    const outcome = await jobOutcome(api, await startSync(api, token, added.body.id as string));
    expect(outcome.status, outcome.error_message).toBe('completed');
  } finally {
    await api.close();
  }
});
