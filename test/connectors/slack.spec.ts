import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/domain/events.js';
import { ALL_SCOPES, startApiServer, type ApiServer } from '../api/apiServer.js';
import { startSlackStandIn, type SlackStandIn } from './slackStandIn.js';
import { eventsSince, itWithService, jobOutcome, LOOPBACK_SERVICES, startSync } from './syncSupport.js';

const ingestedIds = (events: StoredEvent[]) =>
  events.filter((e) => e.type === 'DocumentIngested').map((e) => (e.data as { sourceId: string }).sourceId).sort();

describe('Slack connector against a local stand-in of the Web API', () => {
  let api: ApiServer;
  let slack: SlackStandIn;
  let token: string;
  let connectorId: string;

  beforeAll(async () => {
    slack = await startSlackStandIn();
    slack.channels.set('C0DEV0001', {
      name: 'dev',
      messages: [
        { ts: '1767000001.000100', user: 'U1', text: 'Deploy of the widget service is blocked on AUTH-42' },
        { ts: '1767000002.000100', user: 'U2', text: 'I will look at it', thread_ts: '1767000001.000100' },
        { ts: '1767000003.000100', user: 'U3', text: 'Lunch anyone?' },
        { ts: '1767000004.000100', user: 'U1', text: 'Cache warmed in staging' },
      ],
    });
    api = await startApiServer(LOOPBACK_SERVICES);
    token = api.token(ALL_SCOPES, 'acme');
    const added = await api.call('POST', '/connectors', {
      token,
      body: { type: 'slack', name: 'Dev chat', config: { workspace: 'acme', channels: ['dev'], token: 'xoxb-valid', api_url: slack.url, page_size: 2 } },
    });
    connectorId = added.body.id as string;
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await slack?.close();
  });

  it('syncs threads page by page through a 429, then only what is new, and removes what was deleted', async () => {
    slack.rateLimitNext('conversations.history', 1);
    const first = await startSync(api, token, connectorId);
    expect((await jobOutcome(api, first)).status).toBe('completed');
    expect(slack.calls.filter((c) => c.method === 'conversations.history').length).toBeGreaterThanOrEqual(3);
    const search = await api.call('POST', '/search', { token, body: { query: 'widget deploy blocked', filters: { source_types: ['slack'] } } });
    const hit = (search.body.results as { source: string; content: string; metadata: { path: string } }[])[0];
    expect(hit?.metadata.path).toBe('C0DEV0001/1767000001.000100');
    expect(hit?.source).toBe('https://acme.slack.com/archives/C0DEV0001/p1767000001000100');
    expect((await api.call('GET', `/connectors/${connectorId}`, { token })).body).toMatchObject({ status: 'active', stats: { documents_indexed: 3 } });

    const before = await api.ledger.store.headPosition();
    const dev = slack.channels.get('C0DEV0001')!;
    const lunch = (await api.ledger.readModels.find<{ id: string; sourceId: string }>('documents', {
      where: { project: 'acme', sourceId: 'C0DEV0001/1767000003.000100' },
      limit: 1,
    })).items[0]!;
    dev.messages = dev.messages.filter((m) => m.ts !== '1767000003.000100');
    dev.messages.push({ ts: '1767000005.000100', user: 'U2', text: 'Rollback done' });
    const historyCalls = slack.calls.filter((c) => c.method === 'conversations.history').length;
    const second = await startSync(api, token, connectorId);
    expect((await jobOutcome(api, second)).status).toBe('completed');
    const events = await eventsSince(api, before, 'doc');
    expect(ingestedIds(events)).toEqual(['C0DEV0001/1767000005.000100']);
    expect(events.filter((e) => e.type === 'DocumentRemoved').map((e) => (e.data as { documentId: string }).documentId)).toEqual([lunch.id]);
    const asked = slack.calls.filter((c) => c.method === 'conversations.history').slice(historyCalls)[0];
    expect(asked?.params.oldest).toBe('1767000004.000100');
  }, 60_000);

  it('reports a revoked token as a connector error', async () => {
    slack.tokens.clear();
    const job = await startSync(api, token, connectorId);
    expect(await jobOutcome(api, job)).toMatchObject({ status: 'failed', error_type: 'connector_access_denied' });
    expect(((await api.call('GET', `/connectors/${connectorId}`, { token })).body.stats as { last_error: string }).last_error).toContain('invalid_auth');
    slack.tokens.add('xoxb-valid');
  }, 60_000);
});

itWithService(['SLACK_TOKEN', 'SLACK_CHANNEL'], 'Slack connector against the real service', async () => {
  const api = await startApiServer();
  try {
    const token = api.token(ALL_SCOPES, 'acme');
    const added = await api.call('POST', '/connectors', {
      token,
      body: { type: 'slack', name: 'Real channel', config: { channels: [process.env.SLACK_CHANNEL], token: process.env.SLACK_TOKEN } },
    });
    const outcome = await jobOutcome(api, await startSync(api, token, added.body.id as string));
    expect(outcome.status, outcome.error_message).toBe('completed');
  } finally {
    await api.close();
  }
});
