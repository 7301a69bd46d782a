import { describe, expect, it } from 'vitest';
import { createApiKey } from '../commands/access/createApiKey.js';
import { revokeApiKey } from '../commands/access/revokeApiKey.js';
import { createMemoryEventStore } from '../infra/eventstore/memoryEventStore.js';
import type { DomainEvent } from '../src/domain/events.js';
import { jobDecider } from '../src/services/jobDecider.js';
import { asStored, projectionAfter, unitContext } from '../test/support/givenWhenThen.js';
import { apiKeysProjection } from './access/apiKeys.js';
import { connectorsProjection } from './connectors/connectors.js';
import { documentsProjection } from './search/documents.js';
import { jobsProjection } from './jobs/jobs.js';
import { streamSummaries } from './ledger/streamSummaries.js';
import { tokenFamiliesProjection } from './access/tokenFamilies.js';

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('the api_keys read model', () => {
  it('holds each key created through the command, revoked once revoked, without its secret', async () => {
    const store = createMemoryEventStore();
    const context = unitContext();
    const kept = await createApiKey(store, { scopes: ['search:read'], tenant: 'acme', label: 'ci' }, context);
    const other = await createApiKey(store, { scopes: ['admin'], tenant: 'default' }, context);
    await revokeApiKey(store, other.keyId, context);

    const keys = projectionAfter(apiKeysProjection, await store.readAll());
    expect(keys.get(kept.keyId)).toMatchObject({
      scopes: ['search:read'],
      tenant: 'acme',
      label: 'ci',
      revoked: false,
      createdBy: 'test',
    });
    expect(keys.get(other.keyId)).toMatchObject({ tenant: 'default', label: null, revoked: true });
    expect(JSON.stringify([...keys.values()])).not.toContain(kept.key);
  });
});

const connectorId = id(1);
const connector = (type: string, data: Record<string, unknown> = {}) =>
  ({ type, schemaVersion: 1, data: { connectorId, ...data } }) as DomainEvent;
const connectorAdded = connector('ConnectorAdded', {
  name: 'issues',
  kind: 'github',
  settings: { repo: 'a/b' },
});
const sync = { jobId: id(2), cursor: { page: 1 } };

describe('the connectors read model', () => {
  it.each<{ name: string; given: DomainEvent[]; then: Record<string, unknown> | null }>([
    {
      name: 'an added connector is configuring',
      given: [connectorAdded],
      then: { id: connectorId, name: 'issues', type: 'github', status: 'configuring', lastSync: null },
    },
    {
      name: 'an update renames it and reconfigures',
      given: [connectorAdded, connector('ConnectorUpdated', { name: 'bugs' })],
      then: { name: 'bugs', status: 'reconfiguring', settings: { repo: 'a/b' } },
    },
    {
      name: 'a checkpoint means it is syncing',
      given: [connectorAdded, connector('ConnectorSyncCheckpointed', sync)],
      then: { status: 'syncing' },
    },
    {
      name: 'a completed sync makes it active',
      given: [
        connectorAdded,
        connector('ConnectorSyncCompleted', {
          ...sync,
          itemsSeen: 1,
          documentsChanged: 1,
          documentsRemoved: 0,
        }),
      ],
      then: { status: 'active', lastSync: '2026-01-02T03:04:05.000Z', lastError: null },
    },
    {
      name: 'a failed sync keeps its error',
      given: [
        connectorAdded,
        connector('ConnectorSyncFailed', { jobId: id(2), code: 'UPSTREAM', message: 'down' }),
      ],
      then: { status: 'error', lastError: { code: 'UPSTREAM', message: 'down' } },
    },
    {
      name: 'a removed connector is gone',
      given: [connectorAdded, connector('ConnectorRemoved')],
      then: null,
    },
    {
      name: 'an update of an unknown connector makes none',
      given: [connector('ConnectorUpdated', { name: 'x' })],
      then: null,
    },
  ])('$name', ({ given, then }) => {
    const row = projectionAfter(connectorsProjection, asStored(given)).get(connectorId);
    if (then === null) expect(row).toBeUndefined();
    else expect(row).toMatchObject(then);
  });
});

const documentId = id(3);
const ingested = (title: string): DomainEvent => ({
  type: 'DocumentIngested',
  schemaVersion: 1,
  data: {
    documentId,
    source: 'notes',
    sourceId: 'a.md',
    sourceUrl: null,
    title,
    author: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    contentType: 'text/markdown',
    tags: [],
    metadata: {},
    bodyHash: 'a'.repeat(64),
    bodyBytes: 1,
    chunks: [{ chunkId: id(4), ordinal: 0, textHash: 'b'.repeat(64) } as never],
  },
});

describe('the documents read model', () => {
  it.each<{ name: string; given: DomainEvent[]; then: Record<string, unknown> | null }>([
    {
      name: 'an ingested document is its first version, in the project that wrote it',
      given: [ingested('A')],
      then: { id: documentId, title: 'A', version: 1, project: 'test' },
    },
    {
      name: 'a new version replaces the fields and counts',
      given: [ingested('A'), ingested('B')],
      then: { title: 'B', version: 2 },
    },
    {
      name: 'a removed document is gone',
      given: [
        ingested('A'),
        { type: 'DocumentRemoved', schemaVersion: 1, data: { documentId, reason: null } },
      ],
      then: null,
    },
    {
      name: 'a forgotten document keeps its fields but no chunks, and says who forgot it',
      given: [
        ingested('A'),
        { type: 'DocumentForgotten', schemaVersion: 1, data: { documentId, reason: 'asked', versions: 1 } },
      ],
      then: { title: 'A', chunks: [], forgotten: { by: 'test', reason: 'asked' } },
    },
  ])('$name', ({ given, then }) => {
    const doc = projectionAfter(documentsProjection, asStored(given)).get(documentId);
    if (then === null) expect(doc).toBeUndefined();
    else expect(doc).toMatchObject(then);
  });
});

describe('the jobs read model', () => {
  const jobId = id(5);
  const decided = (...steps: Parameters<typeof jobDecider.decide>[0][]) => {
    let state = jobDecider.initialState();
    const events: DomainEvent[] = [];
    for (const step of steps) {
      const made = jobDecider.decide(step, state, unitContext());
      state = asStored(made).reduce((s, e) => jobDecider.evolve(s, e), state);
      events.push(...made);
    }
    return asStored(events);
  };
  type Step = Parameters<typeof jobDecider.decide>[0];
  const request: Step = {
    type: 'IndexingJobRequested',
    jobId,
    data: { repoPath: '/srv/repo', forceReindex: false, include: [], exclude: [] },
  };
  const start: Step = { type: 'IndexingJobStarted', jobId, data: { runnerId: 'r1' } };

  it.each<{ name: string; steps: Parameters<typeof jobDecider.decide>[0][]; then: Record<string, unknown> }>([
    {
      name: 'a requested job is pending, named after its folder',
      steps: [request],
      then: { jobId, status: 'pending', repoName: 'repo', percentage: 0 },
    },
    { name: 'a started job is running', steps: [request, start], then: { status: 'running' } },
    {
      name: 'a blocked job says why',
      steps: [request, start, { type: 'IndexingJobBlocked', jobId, data: { reason: 'embedder down' } }],
      then: { status: 'blocked', message: 'Blocked: embedder down' },
    },
    {
      name: 'a failed job is failed',
      steps: [
        request,
        start,
        { type: 'IndexingJobFailed', jobId, data: { errorType: 'StorageError', errorMessage: 'disk full' } },
      ],
      then: { status: 'failed' },
    },
    {
      name: 'a job cancelled before it started is cancelled',
      steps: [request, { type: 'CancelJob', jobId }],
      then: { status: 'cancelled' },
    },
    {
      name: 'a running job asked to stop shows it',
      steps: [request, start, { type: 'CancelJob', jobId }],
      then: { status: 'running', cancelRequested: true },
    },
  ])('$name', ({ steps, then }) => {
    expect(projectionAfter(jobsProjection, decided(...steps)).get(jobId)).toMatchObject(then);
  });
});

describe('the streams read model', () => {
  it("counts each stream's events and keeps its first and last", () => {
    const first = asStored([ingested('A')], { streamId: `doc-${documentId}` });
    const second = asStored([ingested('B'), ingested('C')], { streamId: `doc-${documentId}` }).slice(1);
    const summaries = projectionAfter(streamSummaries, [...first, ...second]);
    expect(summaries.get(`doc-${documentId}`)).toMatchObject({
      category: 'doc',
      events: 2,
      lastRevision: 1,
      lastEventType: 'DocumentIngested',
    });
  });
});

describe('the token families read model', () => {
  const familyId = id(6);
  const issued: DomainEvent = {
    type: 'RefreshTokenIssued',
    schemaVersion: 1,
    data: {
      familyId,
      tokenHash: 'c'.repeat(64),
      subject: 'ann',
      tenant: 'acme',
      scopes: ['search:read'],
      expiresAt: '2026-02-01T00:00:00.000Z',
    },
  };
  it.each<{ name: string; given: DomainEvent[]; then: Record<string, unknown> | undefined }>([
    {
      name: 'an issued family is valid, issued by nothing else',
      given: [issued],
      then: { subject: 'ann', tenant: 'acme', revoked: false, issuedWithKey: null, issuedWithFamily: null },
    },
    {
      name: 'a revoked family is revoked',
      given: [
        issued,
        { type: 'RefreshTokenFamilyRevoked', schemaVersion: 1, data: { familyId, reason: 'reuse' } },
      ],
      then: { revoked: true },
    },
    {
      name: 'a revocation of an unknown family makes none',
      given: [{ type: 'RefreshTokenFamilyRevoked', schemaVersion: 1, data: { familyId, reason: 'reuse' } }],
      then: undefined,
    },
  ])('$name', ({ given, then }) => {
    const row = projectionAfter(tokenFamiliesProjection, asStored(given)).get(familyId);
    if (then === undefined) expect(row).toBeUndefined();
    else expect(row).toMatchObject(then);
  });
});
