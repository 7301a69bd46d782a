import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OperationContext } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { startApiServer, type ApiServer } from './apiServer.js';

/** Bulk loads through `POST /api/v1/documents/batch`: what a batch with a bad document stores, and what it answers. */
describe('documents.ingest_batch', { timeout: 120_000 }, () => {
  let api: ApiServer;
  let token: string;
  beforeAll(async () => {
    api = await startApiServer();
    token = api.token(['index:write', 'search:read']);
  });
  afterAll(() => api?.close());

  const sourceCount = async (source: string) => {
    const { body } = await api.call('POST', '/operations/sources', { token, body: {} });
    return (body.sources as { name: string; doc_count: number }[]).find((s) => s.name === source)?.doc_count ?? 0;
  };

  it('refuses a batch with a document that does not parse whole, naming it, and stores none of it', async () => {
    const answer = await api.call('POST', '/documents/batch', {
      token,
      body: { source: 'refused', documents: [{ source_id: 'a', body: 'fine' }, { source_id: 'b' }, { source_id: 'c', body: 'fine' }] },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(JSON.stringify(answer.body)).toMatch(/documents\.1\.body/);
    await api.ledger.catchUp();
    expect(await sourceCount('refused')).toBe(0);
  });

  it('refuses a batch over 1,000 documents, and takes one of 1,000', async () => {
    const documents = (n: number) => Array.from({ length: n }, (_, i) => ({ source_id: `d${i}`, body: `Document ${i}.` }));
    const over = await api.call('POST', '/documents/batch', { token, body: { source: 'many', documents: documents(1001) } });
    expect(over.status).toBe(400);
    const full = await api.call('POST', '/documents/batch', { token, body: { source: 'many', documents: documents(1000) } });
    expect(full.status).toBe(200);
    expect((full.body.results as { outcome: string }[]).every((r) => r.outcome === 'created')).toBe(true);
    await api.ledger.catchUp();
    expect(await sourceCount('many')).toBe(1000);
  });

  it('stores the other documents when one cannot be stored, and says which failed and why', async () => {
    // Larger than an append may be: possible only in this process, where no request body limit holds.
    const huge = { blob: 'x'.repeat(1_100_000) };
    const context: OperationContext = { actor: { subject: 'test', tenant: null, via: 'cli' }, correlationId: crypto.randomUUID(), project: DEFAULT_PROJECT };
    const answer = (await api.ledger.operation('documents.ingest_batch').run(
      {
        source: 'partial',
        documents: [
          { source_id: 'first', body: 'The first document.' },
          { source_id: 'too-large', body: 'Its metadata is too large.', metadata: huge },
          { source_id: 'third', body: 'The third document.' },
        ],
      },
      context,
    )) as { results: { source_id: string; outcome: string; error?: string }[] };
    expect(answer.results.map((r) => [r.source_id, r.outcome])).toEqual([
      ['first', 'created'],
      ['too-large', 'failed'],
      ['third', 'created'],
    ]);
    expect(answer.results[1]!.error).toMatch(/PAYLOAD_TOO_LARGE|too large|limit/i);
    await api.ledger.catchUp();
    const { sources } = (await api.ledger.operation('sources').run({}, context)) as { sources: { name: string; doc_count: number }[] };
    expect(sources.find((s) => s.name === 'partial')?.doc_count).toBe(2);
  });

  it('answers a document given twice in one batch in order: its second version is the one stored', async () => {
    const answer = await api.call('POST', '/documents/batch', {
      token,
      body: { source: 'twice', documents: [{ source_id: 'same', body: 'First text.' }, { source_id: 'same', body: 'Second text.' }] },
    });
    expect(answer.status).toBe(200);
    expect((answer.body.results as { outcome: string }[]).map((r) => r.outcome)).toEqual(['created', 'updated']);
    const id = (answer.body.results as { id: string }[])[0]!.id;
    await api.ledger.catchUp();
    const history = await api.call('GET', `/audit/events?type=DocumentIngested&limit=10`, { token: api.token(['admin']) });
    expect((history.body.events as { stream_id: string }[]).filter((e) => e.stream_id === `doc-${id}`)).toHaveLength(2);
  });
});
