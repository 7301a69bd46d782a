import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/domain/events.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from '../api/apiServer.js';
import { startJiraStandIn, type JiraStandIn, type StandInJiraIssue } from './jiraStandIn.js';
import { eventsSince, itWithService, jobOutcome, LOOPBACK_SERVICES, startSync } from './syncSupport.js';

const sourceIdsOf = (events: StoredEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => (e.data as { sourceId?: string; documentId: string }).sourceId ?? (e.data as { documentId: string }).documentId).sort();

const issue = (key: string, updated: string, extra: Partial<StandInJiraIssue> = {}): StandInJiraIssue => ({
  key,
  summary: `Summary of ${key}`,
  description: `Description of ${key}`,
  reporter: 'Ada',
  created: '2026-01-01T00:00:00Z',
  updated,
  ...extra,
});

describe('Jira connector against a local stand-in of the REST API v3', () => {
  let api: ApiServer;
  let jira: JiraStandIn;
  let token: string;
  let connectorId: string;
  const documents = async () => {
    const { items } = await api.ledger.readModels.find<{ id: string; sourceId: string }>('documents', { where: { project: 'acme', source: 'jira:Auth board' }, limit: 100 });
    return new Map(items.map((d) => [d.sourceId, d.id]));
  };

  beforeAll(async () => {
    jira = await startJiraStandIn();
    jira.issues.set('AUTH-41', issue('AUTH-41', '2026-02-01T10:00:00Z'));
    jira.issues.set('AUTH-42', issue('AUTH-42', '2026-02-02T10:00:00Z', { summary: 'SSO login loops', comments: [{ author: 'Grace', body: 'Happens in src/auth/login.ts', created: '2026-02-02T09:00:00Z' }] }));
    jira.issues.set('AUTH-43', issue('AUTH-43', '2026-02-03T10:00:00Z'));
    jira.issues.set('OPS-1', issue('OPS-1', '2026-02-03T10:00:00Z'));
    api = await startApiServer(LOOPBACK_SERVICES);
    token = api.token(ALL_SCOPES, 'acme');
    const added = await api.call('POST', '/connectors', {
      token,
      body: { type: 'jira', name: 'Auth board', config: { url: jira.url, project: 'AUTH', token: 'jira-valid', page_size: 2 } },
    });
    connectorId = added.body.id as string;
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await jira?.close();
  });

  it('syncs the issues the JQL selects, with comments, paging by startAt through a 429', async () => {
    jira.rateLimitNext(1);
    const job = await startSync(api, token, connectorId);
    expect((await jobOutcome(api, job)).status).toBe('completed');
    expect([...(await documents()).keys()].sort()).toEqual(['AUTH-41', 'AUTH-42', 'AUTH-43']);
    expect(jira.searches.some((s) => s.startAt === '2')).toBe(true);
    const found = await api.call('POST', '/search', { token, body: { query: 'SSO login loops', filters: { source_types: ['jira'] } } });
    const hit = (found.body.results as { source: string; content: string; metadata: { path: string } }[])[0];
    expect(hit).toMatchObject({ source: `${jira.url}/browse/AUTH-42`, metadata: { path: 'AUTH-42' } });
  }, 60_000);

  it('a second sync appends only changed issues and removes deleted ones', async () => {
    const before = await api.ledger.store.headPosition();
    const removed = (await documents()).get('AUTH-41');
    jira.issues.delete('AUTH-41');
    jira.issues.set('AUTH-43', issue('AUTH-43', '2026-03-01T10:00:00Z', { description: 'Now with steps to reproduce' }));
    const job = await startSync(api, token, connectorId);
    expect((await jobOutcome(api, job)).status).toBe('completed');
    const events = await eventsSince(api, before, 'doc');
    expect(sourceIdsOf(events, 'DocumentIngested')).toEqual(['AUTH-43']);
    expect(sourceIdsOf(events, 'DocumentRemoved')).toEqual([removed]);
    // From the cursor (the newest update seen), less a day's margin for Jira's time zones.
    expect(jira.searches.some((s) => s.jql?.includes('AND updated >= "2026-02-02 10:00"'))).toBe(true);
  }, 60_000);

  it('reports a refused token as a connector error', async () => {
    jira.tokens.clear();
    const job = await startSync(api, token, connectorId);
    expect(await jobOutcome(api, job)).toMatchObject({ status: 'failed', error_type: 'connector_access_denied' });
    jira.tokens.add('jira-valid');
  }, 60_000);
});

itWithService(['JIRA_URL', 'JIRA_TOKEN'], 'Jira connector against the real service', async () => {
  const api = await startApiServer();
  try {
    const token = api.token(ALL_SCOPES, 'acme');
    const added = await api.call('POST', '/connectors', {
      token,
      body: {
        type: 'jira',
        name: 'Real site',
        config: { url: process.env.JIRA_URL, token: process.env.JIRA_TOKEN, email: process.env.JIRA_EMAIL, jql: process.env.JIRA_JQL ?? 'updated >= -30d' },
      },
    });
    const outcome = await jobOutcome(api, await startSync(api, token, added.body.id as string));
    expect(outcome.status, outcome.error_message).toBe('completed');
  } finally {
    await api.close();
  }
});
