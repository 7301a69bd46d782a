import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamId } from '../../src/domain/events.js';
import type { Position } from '../../src/domain/position.js';
import { startApiServer, type ApiServer } from '../api/apiServer.js';
import { runCtx } from '../support/cli.js';
import { appendUnchecked } from '../support/events.js';
import { modelEnv, tempDataDir } from '../support/ledger.js';

interface QuarantinedView {
  position: string;
  event_type: string;
  stream_id: string;
  error: string;
}

const context = { actor: { subject: 'test', tenant: null, via: 'cli' as const }, correlationId: crypto.randomUUID(), project: 'default' };

describe('an old event holding text the database cannot store', () => {
  let api: ApiServer;
  let dataDir: string;
  let poison: Position;
  let poisonStream: string;
  let closed = false;

  const ingest = (source_id: string, body: string) =>
    api.ledger.operation('documents.ingest_batch').run({ source: 'notes', documents: [{ source_id, body }] }, context);

  beforeAll(async () => {
    api = await startApiServer({ CTX_AUTH__MODE: 'off', CTX_PROJECTIONS__BATCH_SIZE: '100' });
    dataDir = api.ledger.config.storage.dataDir;
    await ingest('before.md', 'the aardvark note, written before');
    const [written] = await api.ledger.store.readAll({ filter: { eventTypes: ['DocumentIngested'] }, maxCount: 1 });
    // The same document as an older ledger could have written it, under another id, titled with a NUL.
    const documentId = crypto.randomUUID();
    poisonStream = streamId('doc', documentId);
    if (written?.type !== 'DocumentIngested') throw new Error('no document to copy');
    poison = await appendUnchecked(api.ledger.db, poisonStream, {
      type: 'DocumentIngested',
      schemaVersion: 1,
      data: { ...written.data, documentId, sourceId: 'poison.md', title: 'poisoned\u0000title' },
    });
    await ingest('after.md', 'the zebra note, written after the bad one');
    await api.ledger.projections.waitFor(await api.ledger.store.headPosition(), { timeoutMs: 60_000 });
  }, 120_000);
  afterAll(async () => {
    if (!closed) await api.close();
  });

  it('is quarantined by each read model it stops, and the documents after it are searchable', async () => {
    const found = await api.call('POST', '/search', { body: { query: 'zebra' } });
    expect(found.status).toBe(200);
    expect((found.body.results as { metadata: { path: string } }[]).map((r) => r.metadata.path)).toEqual(['after.md']);

    const listed = await api.call('GET', '/projections');
    expect(listed.status).toBe(200);
    const byName = new Map(
      (listed.body.projections as { name: string; last_error: unknown; quarantined: QuarantinedView[] }[]).map((p) => [
        p.name,
        p,
      ]),
    );
    for (const name of ['documents', 'keyword']) {
      expect(byName.get(name), name).toMatchObject({
        last_error: null,
        quarantined: [{ position: poison, event_type: 'DocumentIngested', stream_id: poisonStream }],
      });
      expect(byName.get(name)!.quarantined[0]!.error).toMatch(/Unicode escape sequence|invalid byte sequence/);
    }

    const metrics = await (await fetch(`${api.server.url}/metrics`)).text();
    expect(metrics).toMatch(/^ctx_projection_quarantined_events_total\{projection="documents"\} 1$/m);
  });

  it('a rebuild completes, meeting it again, and status shows where it is', async () => {
    await api.close();
    closed = true;
    const rebuilt = await runCtx(['projections', 'rebuild', 'documents', '--data-dir', dataDir], modelEnv());
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stdout).toMatch(/rebuilt documents/);

    const status = await runCtx(['projections', 'status', '--json', '--data-dir', dataDir], modelEnv());
    expect(status.code, status.stderr).toBe(0);
    const documents = (JSON.parse(status.stdout) as { name: string; quarantined: { position: string }[] }[]).find(
      (p) => p.name === 'documents',
    );
    expect(documents?.quarantined.map((q) => q.position)).toEqual([poison]);

    const table = await runCtx(['projections', 'status', '--data-dir', dataDir], modelEnv());
    expect(table.stdout).toContain(`documents at ${poison}: DocumentIngested in ${poisonStream}`);

    const search = await runCtx(['search', 'zebra', '--json', '--data-dir', dataDir], modelEnv());
    expect(search.code, search.stderr).toBe(0);
    expect(search.stdout).toContain('after.md');
  }, 300_000);
});

describe('ctx with text the ledger cannot store', () => {
  it('repairs a JSONL document (U+FFFD) and refuses an annotation file with exit code 2', async () => {
    const dataDir = tempDataDir();
    const jsonl = path.join(dataDir, 'docs.jsonl');
    writeFileSync(
      jsonl,
      `${JSON.stringify({ source_id: 'odd.md', title: 'odd\u0000title', body: 'the quokka line \ud800 here', tags: ['t\u0000'] })}\n`,
    );
    const ingested = await runCtx(['ingest', '--jsonl', jsonl, '--source', 'notes', '--json', '--data-dir', dataDir], modelEnv());
    expect(ingested.code, ingested.stderr).toBe(0);
    const search = await runCtx(['search', 'quokka', '--tag', 't\ufffd', '--json', '--data-dir', dataDir], modelEnv());
    expect(search.code, search.stderr).toBe(0);
    const [hit] = (JSON.parse(search.stdout) as { results: { id: string; title: string }[] }).results;
    expect(hit?.title).toBe('odd\ufffdtitle');
    const document = await runCtx(['get', hit!.id, '--json', '--data-dir', dataDir], modelEnv());
    expect(JSON.parse(document.stdout)).toMatchObject({ body: 'the quokka line \ufffd here' });

    const session = path.join(dataDir, 'session.json');
    writeFileSync(session, JSON.stringify({ chunks: [{ chunk_id: 'a', position: 0, text: 'A' }] }));
    const started = await runCtx(['annotations', 'start', session, '--json', '--data-dir', dataDir], modelEnv());
    expect(started.code, started.stderr).toBe(0);
    const { session_id: sessionId } = JSON.parse(started.stdout) as { session_id: string };
    const items = path.join(dataDir, 'items.json');
    writeFileSync(items, JSON.stringify([{ chunkId: 'a', notes: 'bad\u0000note' }]));
    const refused = await runCtx(['annotations', 'annotate', sessionId, '--file', items, '--data-dir', dataDir], modelEnv());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/annotations\.0\.notes: contains a NUL character/);
    const progress = await runCtx(['annotations', 'progress', sessionId, '--json', '--data-dir', dataDir], modelEnv());
    expect(JSON.parse(progress.stdout)).toMatchObject({ annotated_chunks: 0 });
  }, 300_000);
});
