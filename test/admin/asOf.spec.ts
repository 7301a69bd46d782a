import { createHash, randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentIdOf } from '../../src/domain/documents.js';
import { removeDocument } from '../../commands/search/removeDocument.js';
import { loadConfig } from '../../src/config.js';
import type { DomainEvent } from '../../src/domain/events.js';
import { commandContext } from '../../src/engine/commands.js';
import { openLedger } from '../../src/main.js';
import type { OperationContext } from '../../src/operations.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { ingest, startApiServer, type ApiServer } from '../api/apiServer.js';
import { runCtx } from '../support/cli.js';
import { newEvent } from '../support/events.js';
import { tempDataDir } from '../support/ledger.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const pause = () => new Promise((resolve) => setTimeout(resolve, 15));

interface StreamView {
  stream_id: string;
  aggregate: string | null;
  as_of: string | null;
  revision: number | null;
  state: Record<string, unknown> | null;
  events: { position: string; revision: number; type: string; recorded_at: string; data: Record<string, unknown> }[];
}

const ACME_DATABASE = 'cb_proj_acme_822b33ad';

/** A job's whole life, one append per event, with the times its events say they happened. */
const recordJob = async (store: EventStore, jobId: string) => {
  const stream = `job-${jobId}`;
  const steps: [DomainEvent, string][] = [
    [
      {
        type: 'IndexingJobRequested',
        schemaVersion: 1,
        data: { jobId, repoPath: '/repos/shop', forceReindex: false, include: [], exclude: [] },
      },
      '2026-03-01T10:00:00.000Z',
    ],
    [{ type: 'IndexingJobStarted', schemaVersion: 1, data: { jobId, runnerId: 'runner-1' } }, '2026-03-01T10:00:01.000Z'],
    [
      {
        type: 'IndexingJobProgressed',
        schemaVersion: 1,
        data: {
          jobId,
          phase: 'chunking',
          percentage: 40,
          message: 'Chunking files: 4/10',
          filesScanned: 10,
          filesIndexed: 4,
          chunksCreated: 12,
          estimatedSecondsRemaining: 30,
        },
      },
      '2026-03-01T10:00:05.000Z',
    ],
    [
      {
        type: 'IndexingJobCompleted',
        schemaVersion: 1,
        data: { jobId, filesScanned: 10, filesIndexed: 10, chunksCreated: 31, filesSkipped: 0, filesRemoved: 0 },
      },
      '2026-03-01T10:00:09.000Z',
    ],
  ];
  for (const [index, [event, occurredAt]] of steps.entries()) {
    await store.append(stream, [newEvent(event, { project: 'acme', occurredAt })], index === 0 ? 'no_stream' : BigInt(index - 1));
    await pause();
  }
  return stream;
};

/** The job of `recordJob` after each of its events, as get_job_status answers (the job tools' shape), by hand. */
const jobAfter = (jobId: string) => {
  const common = { job_id: jobId, project_id: 'acme', database_name: ACME_DATABASE, created_at: '2026-03-01T10:00:00.000Z' };
  const pending = { ...common, status: 'pending', progress_percentage: 0, progress_message: 'Queued', files_scanned: 0, files_indexed: 0, chunks_created: 0 };
  const started = { ...pending, status: 'running', progress_message: 'Starting...', started_at: '2026-03-01T10:00:01.000Z' };
  const progressed = {
    ...started,
    progress_percentage: 40,
    progress_message: 'Chunking files: 4/10',
    files_scanned: 10,
    files_indexed: 4,
    chunks_created: 12,
    estimated_time_remaining_seconds: 30,
  };
  const { estimated_time_remaining_seconds: _eta, ...withoutEta } = progressed;
  const completed = {
    ...withoutEta,
    status: 'completed',
    progress_percentage: 100,
    progress_message: 'Indexing complete',
    files_indexed: 10,
    chunks_created: 31,
    completed_at: '2026-03-01T10:00:09.000Z',
  };
  return [pending, started, progressed, completed];
};

describe('as of a past moment, for every aggregate', () => {
  let api: ApiServer;
  let admin: string;
  let mcp: Client;
  const jobId = randomUUID();
  let jobStream: string;
  const acme: OperationContext = {
    actor: { subject: 'alice', tenant: 'acme', via: 'mcp' },
    correlationId: randomUUID(),
    project: 'acme',
  };
  const run = <T = Record<string, unknown>>(name: string, input: object) =>
    api.ledger.operation(name).run(input as never, acme) as Promise<T>;

  const stream = async (id: string, asOf?: string, token = admin) => {
    const response = await api.call('GET', `/streams/${id}${asOf ? `?as_of=${encodeURIComponent(asOf)}` : ''}`, { token });
    return { status: response.status, body: response.body as unknown as StreamView };
  };
  const tool = async (name: string, args: Record<string, unknown>) => {
    const result = (await mcp.callTool({ name, arguments: args })) as { isError?: boolean; content: { text: string }[] };
    return { isError: Boolean(result.isError), body: JSON.parse(result.content[0]!.text) as Record<string, unknown> };
  };

  beforeAll(async () => {
    api = await startApiServer();
    admin = api.token(['admin'], 'acme', 'auditor');
    jobStream = await recordJob(api.ledger.store, jobId);
    mcp = new Client({ name: 'as-of-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${api.token(['index:read', 'search:read'], 'acme')}` } },
      }),
    );
  });
  afterAll(async () => {
    await mcp.close();
    await api.close();
  });

  describe('a job', () => {
    it('answers get_job_status as of each of its events, and as of a time between two', async () => {
      const { body } = await stream(jobStream);
      const positions = body.events.map((event) => event.position);
      const expected = jobAfter(jobId);
      for (const [index, position] of positions.entries()) {
        const answer = await tool('get_job_status', { job_id: jobId, as_of: position });
        expect(answer).toEqual({ isError: false, body: expected[index] });
      }
      const between = new Date(Date.parse(body.events[1]!.recorded_at) + 1).toISOString();
      expect(Date.parse(between)).toBeLessThan(Date.parse(body.events[2]!.recorded_at));
      expect((await tool('get_job_status', { job_id: jobId, as_of: between })).body).toEqual(expected[1]);
      expect((await tool('get_job_status', { job_id: jobId })).body).toEqual(expected[3]);
    });

    it('answers JOB_NOT_FOUND before the job was requested, and a validation error for a bad moment', async () => {
      const before = await tool('get_job_status', { job_id: jobId, as_of: '2000-01-01T00:00:00Z' });
      expect(before.isError).toBe(true);
      expect(before.body).toMatchObject({ error: { code: 'JOB_NOT_FOUND' } });
      const bad = await tool('get_job_status', { job_id: jobId, as_of: 'last tuesday' });
      expect(bad.isError).toBe(true);
      expect(bad.body).toMatchObject({ error: { code: 'VALIDATION_ERROR', details: { field: 'as_of' } } });
    });

    it('shows its stream over REST with the state as of a position, and every event', async () => {
      const now = await stream(jobStream);
      expect(now.status).toBe(200);
      expect(now.body).toMatchObject({ stream_id: jobStream, aggregate: 'job', as_of: null, revision: 3, state: jobAfter(jobId)[3] });
      expect(now.body.events.map((event) => [event.revision, event.type])).toEqual([
        [0, 'IndexingJobRequested'],
        [1, 'IndexingJobStarted'],
        [2, 'IndexingJobProgressed'],
        [3, 'IndexingJobCompleted'],
      ]);
      const then = await stream(jobStream, now.body.events[2]!.position);
      expect(then.body).toMatchObject({ as_of: now.body.events[2]!.position, revision: 2, state: jobAfter(jobId)[2] });
      expect(then.body.events).toHaveLength(4);
      const before = await stream(jobStream, '2000-01-01T00:00:00Z');
      expect(before.body).toMatchObject({ aggregate: 'job', revision: null, state: null });
    });
  });

  describe('an annotation session', () => {
    let sessionId: string;
    let view: StreamView;

    beforeAll(async () => {
      ({ sessionId } = await run<{ sessionId: string }>('start_session', {
        config: { chunks: ['c0', 'c1', 'c2'].map((id, position) => ({ chunk_id: id, position, text: `text ${position}` })) },
      }));
      await run('annotate_chunk', { sessionId, chunkId: 'c0', categories: ['fee_schedule'], notes: 'first' });
      await run('annotate_chunk', { sessionId, chunkId: 'c1', tags: ['x'] });
      await run('add_relation', { sessionId, sourceChunkId: 'c0', targetChunkId: 'c2', relationType: 'footnotes' });
      view = (await stream(`annotation-${sessionId}`)).body;
    });

    const at = (type: string, nth = 0) => view.events.filter((event) => event.type === type)[nth]!.position;

    it('exports and reports progress exactly as they were', async () => {
      const firstAnnotation = at('ChunkAnnotated');
      expect(await run('get_progress', { sessionId, asOf: firstAnnotation })).toEqual({
        totalChunks: 3,
        annotatedChunks: 1,
        pendingChunks: 2,
        completionPercentage: 33.33,
        pendingChunkIds: ['c1', 'c2'],
      });
      const exported = await run<{ chunks: Record<string, unknown>[] }>('export_annotations', { sessionId, asOf: firstAnnotation });
      expect(exported.chunks.map((c) => [c.chunk_id, c.categories, c.tags, c.notes, c.relations])).toEqual([
        ['c0', ['fee_schedule'], [], 'first', {}],
        ['c1', [], [], '', {}],
        ['c2', [], [], '', {}],
      ]);
      const secondAnnotation = at('ChunkAnnotated', 1);
      expect(await run('get_progress', { sessionId, asOf: secondAnnotation })).toMatchObject({
        annotatedChunks: 2,
        pendingChunkIds: ['c2'],
      });
      const latest = await run<{ chunks: Record<string, unknown>[] }>('export_annotations', { sessionId, asOf: at('RelationAdded') });
      expect(latest.chunks[0]).toMatchObject({ chunk_id: 'c0', relations: { footnotes: ['c2'] } });
    });

    it('shows its state over REST as of a position', async () => {
      const then = await stream(`annotation-${sessionId}`, at('ChunkAnnotated', 1));
      expect(then.status).toBe(200);
      expect(then.body.aggregate).toBe('annotation_session');
      expect(then.body.revision).toBe(view.events.findIndex((event) => event.position === at('ChunkAnnotated', 1)));
      const state = then.body.state as { chunks: Record<string, unknown>[] } & Record<string, unknown>;
      expect(state).toMatchObject({
        session_id: sessionId,
        total_chunks: 3,
        annotated_chunks: 2,
        pending_chunks: 1,
        completion_percentage: 66.67,
        pending_chunk_ids: ['c2'],
      });
      expect(state.chunks.map((c) => [c.chunk_id, c.annotated, c.categories, c.tags, c.relations])).toEqual([
        ['c0', true, ['fee_schedule'], [], {}],
        ['c1', true, [], ['x'], {}],
        ['c2', false, [], [], {}],
      ]);
    });
  });

  describe('a document', () => {
    const documentId = documentIdOf('acme', 'filesystem', 'notes/refunds.md');
    const first = 'Refunds take five working days.';
    const second = 'Refunds take ten working days.';
    let view: StreamView;

    beforeAll(async () => {
      await ingest(api, 'acme', [{ source_id: 'notes/refunds.md', title: 'Refunds', body: first }]);
      await pause();
      await ingest(api, 'acme', [{ source_id: 'notes/refunds.md', title: 'Refunds', body: second }]);
      await pause();
      await removeDocument(api.ledger.store, { documentId, reason: 'obsolete' }, commandContext(acme.actor, { project: 'acme' }));
      await run('ledger.forget', { document_id: documentId, reason: 'asked to' });
      view = (await stream(`doc-${documentId}`)).body;
    });

    const chunkIdsOf = (revision: number) =>
      (view.events[revision]!.data.chunks as { id: string }[]).map((chunk) => chunk.id);

    it('names the version, content hash and chunk ids it had at each moment', async () => {
      expect(view.events.map((event) => event.type)).toEqual([
        'DocumentIngested',
        'DocumentIngested',
        'DocumentRemoved',
        'DocumentForgotten',
      ]);
      const common = { id: documentId, source: 'filesystem', source_id: 'notes/refunds.md', title: 'Refunds', content_type: 'text/markdown' };
      const v1 = await tool('documents.as_of', { id: documentId, as_of: view.events[0]!.position });
      expect(v1).toEqual({
        isError: false,
        body: {
          ...common,
          version: 1,
          revision: 0,
          removed: false,
          forgotten: false,
          content_hash: sha256(first),
          updated_at: expect.any(String) as unknown,
          chunk_ids: chunkIdsOf(0),
        },
      });
      expect(chunkIdsOf(0).length).toBeGreaterThan(0);
      const v2 = await tool('documents.as_of', { id: documentId, as_of: view.events[1]!.recorded_at });
      expect(v2.body).toMatchObject({ version: 2, revision: 1, removed: false, content_hash: sha256(second), chunk_ids: chunkIdsOf(1) });
      expect(chunkIdsOf(1)).not.toEqual(chunkIdsOf(0));
      const removed = await tool('documents.as_of', { id: documentId, as_of: view.events[2]!.position });
      expect(removed.body).toMatchObject({ version: 2, revision: 2, removed: true, forgotten: false, content_hash: null, title: null, chunk_ids: [] });
      const forgotten = await tool('documents.as_of', { id: documentId });
      expect(forgotten.body).toMatchObject({ version: 2, revision: 3, removed: true, forgotten: true, content_hash: null });
      // Forgetting erases the content, not the history: the first version is still named as it was.
      expect((await tool('documents.as_of', { id: documentId, as_of: view.events[0]!.position })).body).toEqual(v1.body);
      const before = await tool('documents.as_of', { id: documentId, as_of: '2000-01-01T00:00:00Z' });
      expect(before.isError).toBe(true);
    });

    it('shows the same version over REST', async () => {
      const then = await stream(`doc-${documentId}`, view.events[0]!.position);
      expect(then.body).toMatchObject({
        aggregate: 'document',
        revision: 0,
        state: { id: documentId, version: 1, content_hash: sha256(first), chunk_ids: chunkIdsOf(0) },
      });
    });

    it("is not found for another tenant's caller", async () => {
      const globex = new Client({ name: 'globex', version: '1.0.0' });
      await globex.connect(
        new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${api.token(['search:read'], 'globex')}` } },
        }),
      );
      const answer = (await globex.callTool({ name: 'documents.as_of', arguments: { id: documentId } })) as { isError?: boolean };
      expect(answer.isError).toBe(true);
      await globex.close();
    });
  });

  describe('GET /streams/{stream_id}', () => {
    it("answers 404 for a stream with no events and for another tenant's stream", async () => {
      const missing = await stream(`job-${randomUUID()}`);
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ error: { code: 'NOT_FOUND_ERROR', correlation_id: expect.any(String) as unknown } });
      expect((await stream(jobStream, undefined, api.token(['admin'], 'globex'))).status).toBe(404);
    });

    it('answers 400 for a moment that is neither a position nor a time', async () => {
      const bad = await stream(jobStream, 'soon');
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    });

    it('answers 400 for a query parameter it does not know, naming it', async () => {
      const response = await api.call('GET', `/streams/${jobStream}?asof=${encodeURIComponent('2026-03-01T10:00:00Z')}`, { token: admin });
      expect(response.status).toBe(400);
      const error = response.body.error as { code: string; detail: string };
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.detail).toMatch(/asof/);
    });

    it('shows the events of a stream of no known aggregate, without a state', async () => {
      const connector = `connector-${randomUUID()}`;
      await api.ledger.store.append(
        connector,
        [newEvent({ type: 'ConnectorRemoved', schemaVersion: 1, data: { connectorId: randomUUID() } }, { project: 'acme' })],
        'no_stream',
      );
      const view = await stream(connector);
      expect(view.body).toMatchObject({ stream_id: connector, aggregate: null, revision: 0, state: null });
      expect(view.body.events.map((event) => event.type)).toEqual(['ConnectorRemoved']);
    });
  });
});

describe('as of a moment on the command line', () => {
  it('shows a job with `ctx jobs show --as-of` and a document with `ctx get --as-of`', async () => {
    const dataDir = tempDataDir();
    const ledger = await openLedger(
      loadConfig({ env: { CTX_EMBEDDINGS__PROVIDER: 'none' }, overrides: { storage: { dataDir } } }),
      { logger: pino({ level: 'silent' }) },
    );
    const jobId = randomUUID();
    const documentId = documentIdOf('default', 'filesystem', 'a.md');
    let positions: string[];
    let documentIngested: string;
    try {
      const jobStream = await recordJob(ledger.store, jobId);
      positions = (await ledger.store.readStream(jobStream)).map((event) => event.position);
      const cli = { actor: { subject: 'cli', tenant: null, via: 'cli' as const }, correlationId: randomUUID(), project: 'default' };
      const ingestDocuments = ledger.operation('documents.ingest_batch');
      await ingestDocuments.run({ source: 'filesystem', documents: [{ source_id: 'a.md', body: 'one' }] }, cli);
      documentIngested = (await ledger.store.readStream(`doc-${documentId}`))[0]!.position;
      await ingestDocuments.run({ source: 'filesystem', documents: [{ source_id: 'a.md', body: 'two' }] }, cli);
    } finally {
      await ledger.close();
    }
    const job = await runCtx(['jobs', 'show', jobId, '--as-of', positions[1]!, '--json', '--data-dir', dataDir]);
    expect(job.code, job.stderr).toBe(0);
    // The CLI leaves out the job tools' workspace name.
    const { database_name: _name, ...then } = jobAfter(jobId)[1]!;
    expect(JSON.parse(job.stdout)).toEqual(then);
    const doc = await runCtx(['get', documentId, '--as-of', documentIngested, '--json', '--data-dir', dataDir]);
    expect(doc.code, doc.stderr).toBe(0);
    expect(JSON.parse(doc.stdout)).toMatchObject({ id: documentId, version: 1, revision: 0, content_hash: sha256('one') });
    const missing = await runCtx(['get', randomUUID(), '--as-of', documentIngested, '--data-dir', dataDir]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No document/);
    // Three processes, each opening the embedded database.
  }, 180_000);
});
