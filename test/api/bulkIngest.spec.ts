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

  /** DocumentIngested events recorded since `since`, as [stream, revision] pairs. */
  const ingestedSince = async (since: string) => {
    const { body } = await api.call('GET', `/audit/events?type=DocumentIngested&since=${since}&limit=500`, {
      token: api.token(['admin']),
    });
    return (body.events as { stream_id: string; revision: number }[]).map((e) => [e.stream_id, e.revision] as const);
  };

  it('answers a rerun of a stored batch unchanged, appending nothing, and stores only what changed', async () => {
    const since = new Date().toISOString();
    const documents = [
      { source_id: 'a', body: 'Alpha.' },
      { source_id: 'b', body: 'Beta.' },
      { source_id: 'c', body: 'Gamma.' },
    ];
    const send = async (docs: typeof documents) => {
      const answer = await api.call('POST', '/documents/batch', { token, body: { source: 'rerun', documents: docs } });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return answer.body.results as { id: string; outcome: string }[];
    };
    const first = await send(documents);
    expect(first.map((r) => r.outcome)).toEqual(['created', 'created', 'created']);
    const again = await send(documents);
    expect(again.map((r) => r.outcome)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(again.map((r) => r.id)).toEqual(first.map((r) => r.id));
    const edited = await send(documents.map((d) => (d.source_id === 'b' ? { ...d, body: 'Beta, edited.' } : d)));
    expect(edited.map((r) => r.outcome)).toEqual(['unchanged', 'updated', 'unchanged']);
    const [a, b, c] = first.map((r) => `doc-${r.id}`);
    expect((await ingestedSince(since)).sort()).toEqual(
      [
        [a, 0],
        [b, 0],
        [b, 1],
        [c, 0],
      ].sort(),
    );
  });

  it('stores both of two batches sent at once with the same documents, each as its own version', async () => {
    const since = new Date().toISOString();
    const batch = (text: string) => ({
      source: 'raced',
      documents: Array.from({ length: 30 }, (_, i) => ({ source_id: `d${i}`, body: `${text} ${i}.` })),
    });
    const answers = await Promise.all(['First', 'Second'].map((text) => api.call('POST', '/documents/batch', { token, body: batch(text) })));
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const [one, two] = answers.map((a) => a.body.results as { id: string; outcome: string }[]);
    // Whichever came second saw the other's version: an update on top of it, never in its place.
    for (let i = 0; i < 30; i++) expect([one![i]!.outcome, two![i]!.outcome].sort()).toEqual(['created', 'updated']);
    const events = await ingestedSince(since);
    expect(events).toHaveLength(60);
    for (const { id } of one!) {
      expect(events.filter(([stream]) => stream === `doc-${id}`).map(([, revision]) => revision).sort()).toEqual([0, 1]);
    }
  });
});
