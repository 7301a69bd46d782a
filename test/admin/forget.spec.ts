import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyDataKeys, createPostgresKeyring } from '../../infra/postgres/postgresKeyring.js';
import { openPglite } from '../../infra/postgres/database.js';
import { documentIdOf } from '../../src/domain/documents.js';
import { loadConfig } from '../../src/config.js';
import { createSecretBox } from '../../infra/crypto/secretBox.js';
import { contentHash } from '../../src/domain/ids.js';
import type { StoredEvent } from '../../src/domain/events.js';
import { ingest, startApiServer, type ApiServer } from '../api/apiServer.js';
import { startServer } from '../../src/main.js';
import { EVERY_TOOLSET, openTestLedger } from '../support/ledger.js';
import { testModelDir } from '../support/requirements.js';

const embeddings = testModelDir !== undefined;

const ZEBRA =
  '# Zebra\n\nThe zebra quartermaster counts striped ledgers every morning before dawn.\n\n' +
  '# Harbour\n\nCobalt harbours shelter the fishing fleet when the northern storms arrive.\n';
const HARBOUR = '# Harbour\n\nCobalt harbours shelter the fishing fleet when the northern storms arrive.\n';

type Chunk = {
  chunk_id: string;
  notes: string | null;
  summary: string | null;
  forgotten?: true;
  tags: string[];
};
type HistoryEntry = {
  position: string;
  type: string;
  chunkId?: string;
  changes?: Record<string, { from: unknown; to: unknown }>;
  forgotten?: true;
};

/** What history must keep exactly: every event's id, type, revision and position. */
const identities = (events: readonly StoredEvent[]) =>
  events.map((e) => ({ id: e.metadata.eventId, type: e.type, revision: e.revision, position: e.position }));

describe('forgetting content without rewriting history', () => {
  let api: ApiServer;
  const as = (subject: string, tenant: string | null = 'acme') => ({
    actor: { subject, tenant, via: 'rest' as const },
    correlationId: crypto.randomUUID(),
    project: 'acme',
  });
  const call = <T = Record<string, unknown>>(name: string, input: object, subject = 'alice') =>
    api.ledger.operation(name).run(input as never, as(subject)) as Promise<T>;
  const admin = (subject = 'dpo') => api.token(['admin'], 'acme', subject);

  beforeAll(async () => {
    api = await startApiServer(
      embeddings
        ? {
            CTX_EMBEDDINGS__PROVIDER: 'local',
            CTX_EMBEDDINGS__MODEL_DIR: testModelDir,
          }
        : {},
    );
  });
  afterAll(async () => {
    await api.close();
  });

  it('forgets what a subject wrote: their notes read as forgotten everywhere, history and other authors intact', async () => {
    const { sessionId } = await call<{ sessionId: string }>('start_session', {
      config: {
        chunks: ['c0', 'c1', 'c2'].map((id, position) => ({ chunk_id: id, position, text: `text ${id}` })),
      },
    });
    await call('annotate_chunk', {
      sessionId,
      chunkId: 'c0',
      notes: 'Alice thinks the fee is wrong',
      summary: 'fees',
      tags: ['t'],
    });
    await call('annotate_chunk', { sessionId, chunkId: 'c1', notes: 'Bob agrees' }, 'bob');
    await call('annotate_chunk', { sessionId, chunkId: 'c2', categories: ['fee_schedule'] });
    const stream = `annotation-${sessionId}`;
    const stored = await api.ledger.db.query<{ data: string }>(
      'SELECT data::text AS data FROM ledger_events WHERE stream_id = $1',
      [stream],
    );
    expect(stored.map((r) => r.data).join('\n')).not.toContain('Alice thinks');

    const eventsBefore = identities(await api.ledger.store.readStream(stream));
    const historyBefore = await call<{ events: HistoryEntry[] }>('annotations.history', { sessionId });
    expect(historyBefore.events.find((e) => e.chunkId === 'c0')?.changes?.notes).toEqual({
      from: '',
      to: 'Alice thinks the fee is wrong',
    });
    const progressBefore = await call('get_progress', { sessionId });

    const denied = await api.call('POST', '/forget', {
      token: api.token(['search:read']),
      body: { subject: 'alice' },
    });
    expect(denied.status).toBe(403);
    const forgotten = await api.call('POST', '/forget', {
      token: admin(),
      body: { subject: 'alice', reason: 'erasure request 12' },
    });
    expect(forgotten.status).toBe(200);
    expect(forgotten.body).toMatchObject({
      forgotten: 'subject',
      subject: 'alice',
      tenant: 'acme',
      keys_forgotten: 1,
      plaintext_notes: 0,
    });

    const exported = await call<{ chunks: Chunk[] }>('export_annotations', { sessionId });
    expect(exported.chunks[0]).toMatchObject({ notes: null, summary: null, forgotten: true, tags: ['t'] });
    expect(exported.chunks[1]).toMatchObject({ notes: 'Bob agrees' });
    expect(exported.chunks[1]!.forgotten).toBeUndefined();
    expect(exported.chunks[2]).toMatchObject({ categories: ['fee_schedule'], notes: '' });
    expect(exported.chunks[2]!.forgotten).toBeUndefined();

    const history = await call<{ events: HistoryEntry[] }>('annotations.history', { sessionId });
    expect(history.events.map((e) => e.position)).toEqual(historyBefore.events.map((e) => e.position));
    const c0 = history.events.find((e) => e.chunkId === 'c0')!;
    expect(c0).toMatchObject({
      forgotten: true,
      changes: { notes: { from: '', to: null }, tags: { to: ['t'] } },
    });
    expect(await call('get_progress', { sessionId })).toEqual(progressBefore);
    expect(identities(await api.ledger.store.readStream(stream))).toEqual(eventsBefore);

    const asOf = historyBefore.events.at(-1)!.position;
    const then = await call<{ chunks: Chunk[] }>('export_annotations', { sessionId, asOf });
    expect(then.chunks[0]).toMatchObject({ notes: null, forgotten: true });
    const diff = await call<{ added: { chunkId: string; forgotten?: true }[] }>('annotations.diff', {
      sessionId,
      from: historyBefore.events[0]!.position,
    });
    expect(diff.added.find((d) => d.chunkId === 'c0')).toMatchObject({ forgotten: true });

    await api.ledger.projections.rebuild('annotation_chunks');
    expect(await call('export_annotations', { sessionId })).toEqual(exported);

    const [audit] = await api.ledger.store.readAll({
      direction: 'backwards',
      maxCount: 1,
      filter: { eventTypes: ['SubjectForgotten'] },
    });
    expect(audit).toMatchObject({
      data: { subject: 'alice', tenant: 'acme', reason: 'erasure request 12', plaintextNotes: 0 },
      metadata: { actor: { subject: 'dpo' } },
    });
    expect(JSON.stringify(audit!.data)).not.toContain('Alice thinks');

    // What the subject writes afterwards is sealed under a new key, and readable.
    await call('annotate_chunk', { sessionId, chunkId: 'c2', notes: 'Alice, again' });
    const after = await call<{ chunks: Chunk[] }>('export_annotations', { sessionId });
    expect(after.chunks[2]).toMatchObject({ notes: 'Alice, again' });
    expect(after.chunks[2]!.forgotten).toBeUndefined();

    // What the subject writes from now on is sealed with a new key, and readable.
    const again = await call<Chunk>('annotate_chunk', { sessionId, chunkId: 'c0', notes: 'A new note' });
    expect(again).toMatchObject({ notes: 'A new note', summary: null, forgotten: true });
  });

  it('keeps notes written before notes were sealed readable, and counts them when their author is forgotten', async () => {
    const { sessionId } = await call<{ sessionId: string }>('start_session', {
      config: { chunks: [{ chunk_id: 'old', position: 0, text: 'old text' }] },
    });
    const stream = `annotation-${sessionId}`;
    // A ChunkAnnotated event as version 1 wrote it: plain notes.
    const eventId = crypto.randomUUID();
    const data = { sessionId, chunkId: 'old', changes: { notes: 'carol wrote this in plain text' } };
    const metadata = {
      eventId,
      commandId: crypto.randomUUID(),
      correlationId: crypto.randomUUID(),
      causationId: null,
      actor: { subject: 'carol', tenant: 'acme', via: 'rest' },
      project: 'acme',
      occurredAt: new Date().toISOString(),
    };
    const [last] = await api.ledger.store.readStream(stream, { direction: 'backwards', maxCount: 1 });
    // Written past the store, which appends the current version only.
    await api.ledger.db.query(
      'SELECT * FROM ledger_append($1, $2, $3, $4::uuid, $5::text[], $6::integer[], $7::json[], $8::json[], $9::text[])',
      [
        stream,
        String(last!.revision),
        'annotation',
        eventId,
        ['ChunkAnnotated'],
        [1],
        [JSON.stringify(data)],
        [JSON.stringify(metadata)],
        ['acme'],
      ],
    );

    const [read] = await api.ledger.store.readStream(stream, { direction: 'backwards', maxCount: 1 });
    expect(read).toMatchObject({ type: 'ChunkAnnotated', schemaVersion: 3 });
    const exported = await call<{ chunks: Chunk[] }>('export_annotations', { sessionId });
    expect(exported.chunks[0]!.notes).toBe('carol wrote this in plain text');

    const forgotten = await call('ledger.forget', { subject: 'carol' }, 'dpo');
    expect(forgotten).toMatchObject({ keys_forgotten: 0, plaintext_notes: 1 });
    const history = await call<{ events: HistoryEntry[] }>('annotations.history', {
      sessionId,
      chunkId: 'old',
    });
    expect(history.events.at(-1)?.changes?.notes?.to).toBe('carol wrote this in plain text');
  });

  it('forgets a document: gone from keyword and semantic search, get answers forgotten, shared text kept', async () => {
    await ingest(
      api,
      'acme',
      [
        { source_id: 'zebra.md', title: 'Zebra notes', body: ZEBRA },
        { source_id: 'harbour.md', title: 'Harbour notes', body: HARBOUR },
      ],
      'notes',
    );
    const zebra = documentIdOf('acme', 'notes', 'zebra.md');
    const harbour = documentIdOf('acme', 'notes', 'harbour.md');
    const found = async (query: string, mode: 'keyword' | 'semantic') =>
      (await call<{ results: { id: string }[] }>('search', { query, mode })).results.map((r) => r.id);
    expect(await found('zebra quartermaster', 'keyword')).toContain(zebra);
    if (embeddings)
      expect(await found('zebra counting striped ledgers at dawn', 'semantic')).toContain(zebra);
    const headBefore = await api.ledger.store.headPosition();
    const zebraText = 'The zebra quartermaster counts striped ledgers every morning before dawn.';
    const zebraChunk = contentHash(`# Zebra\n\n${zebraText}\n`);
    const sharedChunk = contentHash(HARBOUR.trimEnd());
    const blobs = async () =>
      new Set(
        (
          await api.ledger.db.query<{ hash: string }>(
            'SELECT hash FROM content_blobs WHERE hash = ANY($1::text[])',
            [[zebraChunk, sharedChunk, contentHash(ZEBRA)]],
          )
        ).map((r) => r.hash),
      );
    expect(await blobs()).toEqual(new Set([zebraChunk, sharedChunk, contentHash(ZEBRA)]));
    // Search as of before the forgetting, built (and cached) while the document was still there.
    const harboursThen = async () =>
      (
        await call<{ results: { id: string }[] }>('search', {
          query: 'cobalt harbours',
          mode: 'keyword',
          asOf: headBefore,
        })
      ).results.map((r) => r.id);
    expect((await harboursThen()).sort()).toEqual([zebra, harbour].sort());

    const result = await api.call('POST', '/forget', {
      token: admin(),
      body: { document_id: zebra, reason: 'copyright claim' },
    });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      forgotten: 'document',
      newly_forgotten: true,
      contents_erased: 2,
      contents_kept: 1,
    });
    expect(await blobs()).toEqual(new Set([sharedChunk]));

    const checkForgotten = async () => {
      expect(await found('zebra quartermaster', 'keyword')).not.toContain(zebra);
      expect(await found('cobalt harbours', 'keyword')).toEqual([harbour]);
      if (embeddings) {
        expect(await found('zebra counting striped ledgers at dawn', 'semantic')).not.toContain(zebra);
        expect(await found('cobalt harbours shelter the fleet', 'semantic')).not.toContain(zebra);
      }
      expect(await call('get', { id: zebra })).toMatchObject({
        title: 'Zebra notes',
        body: '',
        chunks: [],
        forgotten: true,
      });
      const shared = await call<{ body: string; chunks: { text: string }[]; forgotten?: true }>('get', {
        id: harbour,
      });
      expect(shared.body).toBe(HARBOUR);
      expect(shared.chunks.map((c) => c.text)).toEqual([HARBOUR.trimEnd()]);
      expect(shared.forgotten).toBeUndefined();
    };
    await checkForgotten();
    expect(await found('zebra quartermaster', 'keyword')).toEqual([]);
    // Forgetting reaches back: the cached past view is rebuilt without the document.
    expect(await harboursThen()).toEqual([harbour]);
    // Search as it was before the forgetting has none of the erased text to index either.
    const asOf = await call<{ results: { id: string }[] }>('search', {
      query: 'quartermaster striped',
      mode: 'keyword',
      asOf: headBefore,
    });
    expect(asOf.results).toEqual([]);
    if (embeddings) {
      const cached = await api.ledger.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM embedding_cache WHERE content_hash = $1',
        [contentHash(`Zebra notes\n# Zebra\n\n${zebraText}\n`)],
      );
      expect(cached[0]!.n).toBe(0);
    }

    const docEvents = await api.ledger.store.readStream(`doc-${zebra}`);
    expect(docEvents.map((e) => e.type)).toEqual(['DocumentIngested', 'DocumentForgotten']);
    expect(docEvents[1]).toMatchObject({
      data: { documentId: zebra, reason: 'copyright claim', versions: 1 },
      metadata: { actor: { subject: 'dpo' } },
    });
    expect(JSON.stringify(docEvents[1]!.data)).not.toContain('quartermaster');

    for (const name of ['documents', 'keyword', ...(embeddings ? ['semantic'] : [])]) {
      await api.ledger.projections.rebuild(name);
    }
    await checkForgotten();

    const twice = await call('ledger.forget', { document_id: zebra }, 'dpo');
    expect(twice).toMatchObject({ newly_forgotten: false, contents_erased: 0, position: null });
  });

  it('answers bad requests in each surface’s error format and changes nothing', async () => {
    const head = await api.ledger.store.headPosition();
    const both = await api.call('POST', '/forget', {
      token: admin(),
      body: { subject: 'alice', document_id: crypto.randomUUID() },
    });
    expect(both.status).toBe(400);
    expect(both.body).toMatchObject({ error: { correlation_id: expect.any(String) as unknown } });
    const unknown = await api.call('POST', '/forget', {
      token: admin(),
      body: { document_id: crypto.randomUUID() },
    });
    expect(unknown.status).toBe(404);
    const otherTenant = await api.call('POST', '/forget', {
      token: api.token(['admin'], 'globex'),
      body: { document_id: documentIdOf('acme', 'notes', 'harbour.md') },
    });
    expect(otherTenant.status).toBe(404);
    expect(await api.ledger.store.headPosition()).toBe(head);

    const client = new Client({ name: 'forget-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${admin()}` } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('ledger.forget');
      const result = await client.callTool({ name: 'ledger.forget', arguments: { reason: 'neither target' } });
      expect(result.isError).toBe(true);
    } finally {
      await client.close();
    }
    expect(await api.ledger.store.headPosition()).toBe(head);
  });

  it('moves data keys to another ledger wrapped with its master key; forgotten keys stay forgotten', async () => {
    const box = createSecretBox(api.ledger.config);
    const { keyring } = api.ledger;
    const kept = (await keyring.sealer({ subject: 'erin', tenant: 'acme', via: 'rest' })).seal('erin writes');
    const gone = (await keyring.sealer({ subject: 'frank', tenant: 'acme', via: 'rest' })).seal(
      'frank writes',
    );
    await keyring.forget(await keyring.liveKeys('frank', 'acme'));

    const destination = await openPglite();
    try {
      const otherBox = createSecretBox(
        loadConfig({ env: { CTX_AUTH__SECRETS_KEY: 'another master key, long enough for the test' } }),
      );
      expect(
        await copyDataKeys({ db: api.ledger.db, box }, { db: destination, box: otherBox }),
      ).toBeGreaterThan(1);
      const copied = await (await createPostgresKeyring(destination, otherBox)).opener([kept, gone]);
      expect(copied.open(kept)).toBe('erin writes');
      expect(copied.open(gone)).toBeNull();
      await expect((await createPostgresKeyring(destination, box)).opener([kept])).rejects.toThrow(
        'master key',
      );
    } finally {
      await destination.close();
    }
  });
});

describe('forgetting through a deployment without authentication', () => {
  it('forgets a subject only in the default tenant, whichever tenant the request names', async () => {
    const ledger = await openTestLedger({ CTX_EMBEDDINGS__PROVIDER: 'none', ...EVERY_TOOLSET });
    const server = await startServer(ledger);
    try {
      const inGlobex = {
        actor: { subject: 'carol', tenant: 'globex', via: 'mcp' as const },
        correlationId: crypto.randomUUID(),
        project: 'globex',
      };
      const call = <T = Record<string, unknown>>(name: string, input: object) =>
        ledger.operation(name).run(input as never, inGlobex) as Promise<T>;
      const { sessionId } = await call<{ sessionId: string }>('start_session', {
        config: { chunks: [{ chunk_id: 'c0', position: 0, text: 'text c0' }] },
      });
      await call('annotate_chunk', { sessionId, chunkId: 'c0', notes: 'Carol writes in globex' });

      const response = await fetch(`${server.url}/api/v1/forget`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ subject: 'carol', tenant: 'globex' }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ forgotten: 'subject', subject: 'carol', tenant: 'default', keys_forgotten: 0 });
      const exported = await call<{ chunks: Chunk[] }>('export_annotations', { sessionId });
      expect(exported.chunks[0]).toMatchObject({ notes: 'Carol writes in globex' });

      // MCP over HTTP is the same caller as the REST API's: it forgets within the default tenant too.
      const client = new Client({ name: 'forget-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      try {
        const result = await client.callTool({ name: 'ledger.forget', arguments: { subject: 'carol', tenant: 'globex' } });
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toMatchObject({ forgotten: 'subject', subject: 'carol', tenant: 'default', keys_forgotten: 0 });
      } finally {
        await client.close();
      }
      const afterMcp = await call<{ chunks: Chunk[] }>('export_annotations', { sessionId });
      expect(afterMcp.chunks[0]).toMatchObject({ notes: 'Carol writes in globex' });
    } finally {
      await server.close();
    }
  });
});
