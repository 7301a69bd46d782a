import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../src/domain/events.js';
import type { Actor } from '../../src/domain/metadata.js';
import { loadConfig } from '../../src/config.js';
import { openLedger, startServer, type RunningServer } from '../../src/main.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { startApiServer, type ApiServer } from '../api/apiServer.js';
import { runCtx } from '../support/cli.js';
import { newEvent, sampleEvent } from '../support/events.js';
import { openTestLedger, tempDataDir } from '../support/ledger.js';

interface AuditEvent {
  position: string;
  stream_id: string;
  revision: number;
  type: string;
  actor: Actor;
  project: string;
  command_id: string;
  correlation_id: string;
  causation_id: string | null;
  recorded_at: string;
  data: Record<string, unknown>;
}
interface AuditPage {
  events: AuditEvent[];
  next_cursor: string | null;
}

const connectorAdded = (): DomainEvent => ({
  type: 'ConnectorAdded',
  schemaVersion: 1,
  data: { connectorId: randomUUID(), name: 'docs', kind: 'filesystem', settings: { root: '/srv' } },
});
const documentRemoved = (): DomainEvent => ({
  type: 'DocumentRemoved',
  schemaVersion: 1,
  data: { documentId: randomUUID(), reason: 'gone' },
});
const jobFailed = (): DomainEvent => ({
  type: 'IndexingJobFailed',
  schemaVersion: 1,
  data: { jobId: randomUUID(), errorType: 'io', errorMessage: 'disk full' },
});

/**
 * Six events, one at a time so that each has its own recording time. Named by their order:
 * e1..e4 in project acme, e5..e6 in globex. e1, e2 and e5 share a correlation.
 */
const seed = async (store: EventStore) => {
  const correlated = `corr-${randomUUID()}`;
  const who = (subject: string): Actor => ({ subject, tenant: null, via: 'rest' });
  const jobA = `job-${randomUUID()}`;
  const plan = [
    { stream: jobA, event: sampleEvent(), project: 'acme', actor: 'alice', correlationId: correlated },
    { stream: `connector-${randomUUID()}`, event: connectorAdded(), project: 'acme', actor: 'bob', correlationId: correlated },
    { stream: `doc-${randomUUID()}`, event: documentRemoved(), project: 'acme', actor: 'alice', correlationId: `corr-${randomUUID()}` },
    { stream: jobA, event: jobFailed(), project: 'acme', actor: 'bob', correlationId: `corr-${randomUUID()}` },
    { stream: `job-${randomUUID()}`, event: sampleEvent(), project: 'globex', actor: 'alice', correlationId: correlated },
    { stream: `doc-${randomUUID()}`, event: documentRemoved(), project: 'globex', actor: 'carol', correlationId: `corr-${randomUUID()}` },
  ];
  const written = [];
  for (const step of plan) {
    const event = newEvent(step.event, {
      project: step.project,
      actor: who(step.actor),
      correlationId: step.correlationId,
      commandId: `cmd-${randomUUID()}`,
    });
    await store.append(step.stream, [event], 'any');
    written.push({ ...step, commandId: event.metadata.commandId });
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
  return { written, correlated, jobA };
};

type Seeded = Awaited<ReturnType<typeof seed>>;

describe('the audit log over REST and MCP, with authentication', () => {
  let api: ApiServer;
  let seeded: Seeded;
  let acmeAdmin: string;
  /** The command ids of e1..e6: what each assertion names its expected events by. */
  let e: string[];

  const audit = async (query: string, token = acmeAdmin) => {
    const response = await api.call('GET', `/audit/events${query}`, { token });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as unknown as AuditPage;
  };
  const commandsOf = (page: AuditPage) => page.events.map((event) => event.command_id);
  const everyPage = async (query: string) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: AuditPage = await audit(`${query}${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...commandsOf(page));
      cursor = page.next_cursor;
    } while (cursor);
    return seen;
  };

  beforeAll(async () => {
    api = await startApiServer();
    seeded = await seed(api.ledger.store);
    e = seeded.written.map((w) => w.commandId);
    acmeAdmin = api.token(['admin'], 'acme', 'auditor');
  });
  afterAll(() => api.close());

  it("shows a tenant's administrator every event of its project, newest first, and nothing of another's", async () => {
    const page = await audit('');
    expect(commandsOf(page)).toEqual([e[3], e[2], e[1], e[0]]);
    expect(page.next_cursor).toBeNull();
    const [latest] = page.events;
    expect(latest).toMatchObject({
      stream_id: seeded.jobA,
      revision: 1,
      type: 'IndexingJobFailed',
      schema_version: 1,
      actor: { subject: 'bob', tenant: null, via: 'rest' },
      project: 'acme',
      correlation_id: seeded.written[3]!.correlationId,
      causation_id: null,
      data: { errorType: 'io', errorMessage: 'disk full' },
    });
    expect(Object.keys(latest!).sort()).toEqual(
      [
        'position', 'stream_id', 'revision', 'type', 'schema_version', 'occurred_at', 'recorded_at',
        'actor', 'project', 'command_id', 'correlation_id', 'causation_id', 'data',
      ].sort(),
    );
    expect(commandsOf(await audit('', api.token(['admin'], 'globex')))).toEqual([e[5], e[4]]);
    expect(commandsOf(await audit('?project=globex'))).toEqual([]);
    expect(commandsOf(await audit('?project=acme&order=oldest'))).toEqual([e[0], e[1], e[2], e[3]]);
  });

  it('filters by stream category', async () => {
    expect(commandsOf(await audit('?category=job'))).toEqual([e[3], e[0]]);
    expect(commandsOf(await audit('?category=doc'))).toEqual([e[2]]);
    expect(commandsOf(await audit('?category=annotation'))).toEqual([]);
  });

  it('filters by event type, repeated or comma-separated', async () => {
    const repeated = await audit('?type=ConnectorAdded&type=DocumentRemoved');
    expect(commandsOf(repeated)).toEqual([e[2], e[1]]);
    expect(commandsOf(await audit('?type=ConnectorAdded,DocumentRemoved'))).toEqual([e[2], e[1]]);
    expect(commandsOf(await audit('?type=IndexingJobStarted'))).toEqual([e[0]]);
  });

  it('filters by actor, command id and correlation id, and combines filters', async () => {
    expect(commandsOf(await audit('?actor=alice'))).toEqual([e[2], e[0]]);
    expect(commandsOf(await audit('?actor=carol'))).toEqual([]);
    expect(commandsOf(await audit(`?command_id=${e[1]}`))).toEqual([e[1]]);
    // The correlation spans both tenants; acme sees its part of it.
    expect(commandsOf(await audit(`?correlation_id=${seeded.correlated}`))).toEqual([e[1], e[0]]);
    expect(commandsOf(await audit('?actor=bob&category=job'))).toEqual([e[3]]);
  });

  it('filters by recording time, both bounds inclusive', async () => {
    const oldest = (await audit('?order=oldest')).events;
    const [, second, third] = oldest;
    expect(commandsOf(await audit(`?since=${second!.recorded_at}&until=${third!.recorded_at}`))).toEqual([e[2], e[1]]);
    expect(commandsOf(await audit(`?since=${third!.recorded_at}&order=oldest`))).toEqual([e[2], e[3]]);
    expect(commandsOf(await audit(`?until=${second!.recorded_at}`))).toEqual([e[1], e[0]]);
  });

  it('pages with a cursor, newest first and oldest first, without gaps or repeats', async () => {
    expect(await everyPage('?limit=1')).toEqual([e[3], e[2], e[1], e[0]]);
    expect(await everyPage('?limit=3&order=oldest')).toEqual([e[0], e[1], e[2], e[3]]);
    const firstTwo = await audit('?limit=2&actor=bob&order=oldest');
    expect(commandsOf(firstTwo)).toEqual([e[1], e[3]]);
    const rest = await audit(`?limit=2&actor=bob&order=oldest&cursor=${firstTwo.next_cursor}`);
    expect(rest).toEqual({ events: [], next_cursor: null });
  });

  it('needs the admin scope and credentials, in the /api/v1 error format', async () => {
    const forbidden = await api.call('GET', '/audit/events', { token: api.token(['search:read', 'index:read']) });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toMatchObject({
      code: 'AUTHORIZATION_ERROR',
      detail: "This action needs the 'admin' scope",
      correlation_id: expect.any(String) as unknown,
    });
    expect((await api.call('GET', '/audit/events')).status).toBe(401);
    const stream = await api.call('GET', `/streams/${seeded.jobA}`, { token: api.token(['search:read']) });
    expect(stream.status).toBe(403);
  });

  it.each([
    ['an unknown event type', '?type=NoSuchEvent', /type/],
    ['a cursor it never returned', '?cursor=abc', /cursor/],
    ['a limit out of range', '?limit=501', /limit/],
    ['a time that is not ISO 8601', '?since=yesterday', /since/],
    ['a time whose UTC offset does not exist', '?until=0479-01-23T12%3A16%3A36.9%2B21%3A19', /until/],
    ['an unknown order', '?order=sideways', /order/],
    ['a stream category no stream has', '?category=jobs', /category: Invalid option: expected one of "doc"\|"job"/],
    ['a parameter it does not know', '?actr=alice', /actr/],
  ])('answers %s with a validation error', async (_name, query, detail) => {
    const response = await api.call('GET', `/audit/events${query}`, { token: acmeAdmin });
    expect(response.status).toBe(400);
    const error = response.body.error as { code: string; detail: string; correlation_id: string };
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.detail).toMatch(detail);
    expect(error.correlation_id).toEqual(response.headers.get('x-correlation-id'));
  });

  describe('ledger.audit over MCP', () => {
    const clients: Client[] = [];
    const connect = async (token: string) => {
      const client = new Client({ name: 'audit-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      return client;
    };
    const structured = (result: unknown) =>
      (result as { structuredContent: { events: { commandId: string; actor: Actor }[]; nextCursor: string | null } })
        .structuredContent;
    afterAll(async () => {
      for (const client of clients) await client.close();
    });

    it('filters and pages like the REST endpoint, in camelCase, within the tenant', async () => {
      const acme = await connect(acmeAdmin);
      const first = structured(
        await acme.callTool({ name: 'ledger.audit', arguments: { actor: 'alice', order: 'oldest', limit: 1 } }),
      );
      expect(first.events.map((event) => event.commandId)).toEqual([e[0]]);
      const second = structured(
        await acme.callTool({
          name: 'ledger.audit',
          arguments: { actor: 'alice', order: 'oldest', limit: 1, cursor: first.nextCursor },
        }),
      );
      expect(second.events.map((event) => event.commandId)).toEqual([e[2]]);
      const correlated = structured(
        await acme.callTool({ name: 'ledger.audit', arguments: { correlationId: seeded.correlated } }),
      );
      expect(correlated.events.map((event) => event.commandId)).toEqual([e[1], e[0]]);
      const byCommand = structured(
        await acme.callTool({ name: 'ledger.audit', arguments: { commandId: e[3], category: 'job', types: ['IndexingJobFailed'] } }),
      );
      expect(byCommand.events.map((event) => event.commandId)).toEqual([e[3]]);
      const globexAsked = structured(await acme.callTool({ name: 'ledger.audit', arguments: { project: 'globex' } }));
      expect(globexAsked).toEqual({ events: [], nextCursor: null });
    });

    it('refuses a caller without the admin scope, and bad input, as error results', async () => {
      const reader = await connect(api.token(['search:read', 'index:read']));
      const denied = await reader.callTool({ name: 'ledger.audit', arguments: {} });
      expect(denied.isError).toBe(true);
      expect(JSON.stringify(denied.content)).toContain("'admin' scope");
      const acme = await connect(acmeAdmin);
      const bad = await acme.callTool({ name: 'ledger.audit', arguments: { types: ['NoSuchEvent'] } });
      expect(bad.isError).toBe(true);
      expect(JSON.stringify(bad.content)).toMatch(/types/);
    });
  });
});

describe('the audit log of an open deployment (authentication off)', () => {
  let server: RunningServer;
  let seeded: Seeded;

  beforeAll(async () => {
    const ledger = await openTestLedger({ CTX_EMBEDDINGS__PROVIDER: 'none' });
    seeded = await seed(ledger.store);
    server = await startServer(ledger);
  });
  afterAll(() => server.close());

  it("shows every tenant's events", async () => {
    const response = await fetch(`${server.url}/api/v1/audit/events?correlation_id=${seeded.correlated}&order=oldest`);
    expect(response.status).toBe(200);
    const page = (await response.json()) as AuditPage;
    expect(page.events.map((event) => [event.command_id, event.project])).toEqual([
      [seeded.written[0]!.commandId, 'acme'],
      [seeded.written[1]!.commandId, 'acme'],
      [seeded.written[4]!.commandId, 'globex'],
    ]);
  });
});

describe('ctx audit', () => {
  it('filters the ledger of a data directory and prints JSON or a table', async () => {
    const dataDir = tempDataDir();
    const ledger = await openLedger(
      loadConfig({ env: { CTX_EMBEDDINGS__PROVIDER: 'none' }, overrides: { storage: { dataDir } } }),
      { logger: pino({ level: 'silent' }) },
    );
    let seeded: Seeded;
    try {
      seeded = await seed(ledger.store);
    } finally {
      await ledger.close();
    }
    const json = await runCtx(['audit', '--actor', 'alice', '--category', 'job', '--oldest-first', '--json', '--data-dir', dataDir]);
    expect(json.code, json.stderr).toBe(0);
    const page = JSON.parse(json.stdout) as { events: { command_id: string }[]; next_cursor: string | null };
    expect(page.events.map((event) => event.command_id)).toEqual([seeded.written[0]!.commandId, seeded.written[4]!.commandId]);
    const text = await runCtx(['audit', '--type', 'DocumentRemoved,ConnectorAdded', '--project', 'acme', '--data-dir', dataDir]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.trim().split('\n').slice(1).map((line) => line.split(/\s+/)[4])).toEqual([
      'DocumentRemoved',
      'ConnectorAdded',
    ]);
    const bad = await runCtx(['audit', '--type', 'NoSuchEvent', '--data-dir', dataDir]);
    expect(bad.code).toBe(2);
    // Three processes, each opening the embedded database.
  }, 180_000);
});
