import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openLedger, startServer, type Ledger } from '../../src/main.js';
import { annotationsModule } from '../../src/modules/annotationsModule.js';
import { ledgerModule } from '../../src/modules/ledgerModule.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { accessModule } from '../../src/modules/accessModule.js';
import { settingsModule } from '../../src/modules/settingsModule.js';
import { tempDataDir } from '../support/ledger.js';

const open = (dataDir: string) =>
  openLedger(loadConfig({ env: {}, overrides: { storage: { dataDir }, server: { bind: '127.0.0.1:0' } } }), {
    logger: pino({ level: 'silent' }),
    modules: [ledgerModule, annotationsModule, settingsModule, accessModule],
  });

const chunks = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ chunk_id: `c${i}`, position: i, text: `text ${i}` }));

describe('annotation sessions: time travel, durability and concurrency', () => {
  const dataDir = tempDataDir();
  let ledger: Ledger;
  const as = (subject: string) => ({
    actor: { subject, tenant: null, via: 'rest' as const },
    correlationId: crypto.randomUUID(),
    project: DEFAULT_PROJECT,
  });
  const call = <T = Record<string, unknown>>(name: string, input: object, subject = 'alice') =>
    ledger.operation(name).run(input as never, as(subject)) as Promise<T>;

  beforeAll(async () => {
    ledger = await open(dataDir);
    await ledger.start();
  });
  afterAll(async () => {
    await ledger.close();
  });

  it('exports exactly the earlier state as of a recorded position, and diffs exactly the later changes', async () => {
    const { sessionId } = await call<{ sessionId: string }>('start_session', {
      config: { chunks: chunks(4) },
    });
    await call('annotate_chunk', { sessionId, chunkId: 'c0', categories: ['fee_schedule'], notes: 'first' });
    const early = await call<{ chunks: object[] }>('export_annotations', { sessionId });
    const history = await call<{ events: { position: string }[] }>('annotations.history', { sessionId });
    const recorded = history.events.at(-1)!.position;

    await call('annotate_chunk', { sessionId, chunkId: 'c0', notes: 'second' }, 'bob');
    await call('annotate_chunk', { sessionId, chunkId: 'c2', tags: ['x'] }, 'bob');
    await call('add_relation', {
      sessionId,
      sourceChunkId: 'c1',
      targetChunkId: 'c3',
      relationType: 'footnotes',
    });

    expect(await call('export_annotations', { sessionId, asOf: recorded })).toEqual(early);
    expect(await call('get_progress', { sessionId, asOf: recorded })).toMatchObject({
      annotatedChunks: 1,
      pendingChunkIds: ['c1', 'c2', 'c3'],
    });
    expect(await call('annotations.diff', { sessionId, from: recorded })).toEqual({
      from: recorded,
      to: null,
      added: [
        { chunkId: 'c1', changes: { relations: { from: {}, to: { footnotes: ['c3'] } } } },
        { chunkId: 'c2', changes: { tags: { from: [], to: ['x'] } } },
      ],
      changed: [{ chunkId: 'c0', changes: { notes: { from: 'first', to: 'second' } } }],
      removed: [],
    });
    const now = await call<{ events: { position: string }[] }>('annotations.history', { sessionId });
    const reversed = await call<{ removed: { chunkId: string }[] }>('annotations.diff', {
      sessionId,
      from: now.events.at(-1)!.position,
      to: recorded,
    });
    expect(reversed.removed.map((r) => r.chunkId)).toEqual(['c1', 'c2']);
  });

  it('keeps who changed which field when, per chunk', async () => {
    const { sessionId } = await call<{ sessionId: string }>('start_session', {
      config: { chunks: chunks(2) },
    });
    await call('annotate_chunk', { sessionId, chunkId: 'c1', summary: 'a' }, 'alice');
    await call('annotate_chunk', { sessionId, chunkId: 'c1', summary: 'b', notes: 'n' }, 'bob');
    const history = await call<{
      events: { type: string; actor: { subject: string }; changes?: object; position: string }[];
    }>('annotations.history', { sessionId, chunkId: 'c1' });
    const annotations = history.events.filter((e) => e.type === 'ChunkAnnotated');
    expect(annotations.map((e) => [e.actor.subject, e.changes])).toEqual([
      ['alice', { summary: { from: '', to: 'a' } }],
      ['bob', { summary: { from: 'a', to: 'b' }, notes: { from: '', to: 'n' } }],
    ]);
    expect(annotations[0]!.position < annotations[1]!.position).toBe(true);
  });

  it('records a batch as one event, and tells its changes chunk by chunk, page by page', async () => {
    const { sessionId } = await call<{ sessionId: string }>('start_session', {
      config: { chunks: chunks(3) },
    });
    await call('annotate_chunk', { sessionId, chunkId: 'c1', tags: ['before'] });
    const batch = await call<{ successCount: number; errorCount: number }>(
      'annotate_chunks',
      {
        sessionId,
        annotations: [
          { chunkId: 'c0', tags: ['a'] },
          { chunkId: 'nope', tags: ['lost'] },
          { chunkId: 'c1', tags: ['b'] },
          { chunkId: 'c0', notes: 'again' },
        ],
      },
      'bob',
    );
    expect(batch).toMatchObject({ successCount: 3, errorCount: 1 });
    const events = await ledger.store.readStream(`annotation-${sessionId}`);
    expect(events.filter((e) => e.type === 'ChunkAnnotated')).toHaveLength(2);

    type Entry = { type: string; revision: number; chunkId?: string; changes?: Record<string, unknown> };
    const annotated = (entries: Entry[]) =>
      entries.filter((e) => e.type === 'ChunkAnnotated').map((e) => [e.chunkId, e.changes]);
    const whole = await call<{ events: Entry[] }>('annotations.history', { sessionId });
    expect(annotated(whole.events)).toEqual([
      ['c1', { tags: { from: [], to: ['before'] } }],
      ['c0', { tags: { from: [], to: ['a'] } }],
      ['c1', { tags: { from: ['before'], to: ['b'] } }],
      ['c0', { notes: { from: '', to: 'again' } }],
    ]);
    const batchEntries = whole.events.slice(-3);
    expect(new Set(batchEntries.map((e) => e.revision)).size).toBe(1);

    // Pages of two end inside the batch, and the next page goes on from there.
    const pages: Entry[] = [];
    let cursor: string | undefined;
    do {
      const page = await call<{ events: Entry[]; nextCursor: string | null }>('annotations.history', {
        sessionId,
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      expect(page.events.length).toBeLessThanOrEqual(2);
      pages.push(...page.events);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(pages).toEqual(whole.events);
    // A cursor naming only a revision (as earlier versions gave) goes on after that whole event.
    const afterSingle = await call<{ events: Entry[] }>('annotations.history', {
      sessionId,
      cursor: String(batchEntries[0]!.revision - 1),
    });
    expect(afterSingle.events).toEqual(batchEntries);

    const ofC0 = await call<{ events: Entry[] }>('annotations.history', { sessionId, chunkId: 'c0' });
    expect(annotated(ofC0.events)).toEqual([
      ['c0', { tags: { from: [], to: ['a'] } }],
      ['c0', { notes: { from: '', to: 'again' } }],
    ]);
    const [c0] = (await call<{ chunks: { tags: string[]; notes: string }[] }>('export_annotations', { sessionId }))
      .chunks;
    expect(c0).toMatchObject({ tags: ['a'], notes: 'again' });
  });

  it('lets two clients annotate the same chunk at once without losing either change', async () => {
    const { sessionId } = await call<{ sessionId: string }>('start_session', {
      config: { chunks: chunks(1) },
    });
    const results = await Promise.all([
      call('annotate_chunk', { sessionId, chunkId: 'c0', tags: ['from-alice'] }, 'alice'),
      call('annotate_chunk', { sessionId, chunkId: 'c0', notes: 'from bob' }, 'bob'),
    ]);
    expect(results).toHaveLength(2);
    const [chunk] = (
      await call<{ chunks: { tags: string[]; notes: string }[] }>('export_annotations', { sessionId })
    ).chunks;
    expect(chunk).toMatchObject({ tags: ['from-alice'], notes: 'from bob' });
    const history = await call<{ events: { type: string; actor: { subject: string } }[] }>(
      'annotations.history',
      { sessionId },
    );
    expect(
      history.events
        .filter((e) => e.type === 'ChunkAnnotated')
        .map((e) => e.actor.subject)
        .sort(),
    ).toEqual(['alice', 'bob']);
  });

  it('answers a conflicting writer in another process with a retry that lands on the fresh state', async () => {
    const { sessionId } = await call<{ sessionId: string }>('start_session', {
      config: { chunks: chunks(2) },
    });
    await call('annotate_chunk', { sessionId, chunkId: 'c0', tags: ['one'] });
    // Another writer appends behind this process's cached state: the next command must see it.
    await ledger.store.append(
      `annotation-${sessionId}`,
      [
        {
          type: 'ChunkAnnotated',
          schemaVersion: 3,
          data: { sessionId, annotations: [{ chunkId: 'c0', changes: { notes: 'elsewhere' } }] },
          metadata: {
            eventId: crypto.randomUUID(),
            commandId: crypto.randomUUID(),
            correlationId: crypto.randomUUID(),
            causationId: null,
            actor: { subject: 'other-process', tenant: null, via: 'rest' },
            project: DEFAULT_PROJECT,
            occurredAt: new Date().toISOString(),
          },
        },
      ],
      'any',
    );
    const chunk = await call<{ tags: string[]; notes: string }>('annotate_chunk', {
      sessionId,
      chunkId: 'c0',
      tags: ['two'],
    });
    expect(chunk).toMatchObject({ tags: ['two'], notes: 'elsewhere' });
  });

  it('rebuilds every annotation read model from events to equal the live one', async () => {
    const { sessionId } = await call<{ sessionId: string }>('start_session', {
      config: { chunks: chunks(30) },
    });
    await call('annotate_chunks', {
      sessionId,
      annotations: chunks(20).map((c, i) => ({
        chunkId: c.chunk_id,
        keywords: [`k${i}`],
        categories: ['footnotes'],
      })),
    });
    await call('add_relation', {
      sessionId,
      sourceChunkId: 'c25',
      targetChunkId: 'c1',
      relationType: 'references',
    });
    const progress = await call('get_progress', { sessionId });
    const exported = await call('export_annotations', { sessionId });
    const summary = await ledger.readModels.get('annotation_sessions', sessionId);
    for (const name of ['annotation_sessions', 'annotation_chunk_lists', 'annotation_chunks'])
      await ledger.projections.rebuild(name);
    expect(await ledger.readModels.get('annotation_sessions', sessionId)).toEqual(summary);
    expect(await call('export_annotations', { sessionId })).toEqual(exported);
    expect(await call('get_progress', { sessionId })).toEqual(progress);
  });

  it('keeps a session across a server restart', async () => {
    const dir = tempDataDir();
    let server = await startServer(await open(dir));
    const post = (path: string, body: object) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const started = (await (
      await post('/api/v1/annotations/sessions', { config: { chunks: chunks(3) } })
    ).json()) as {
      sessionId: string;
    };
    await post(`/api/v1/annotations/sessions/${started.sessionId}/annotations`, {
      chunkId: 'c1',
      summary: 'kept',
    });
    await server.close();
    server = await startServer(await open(dir));
    try {
      const response = await fetch(`${server.url}/api/v1/annotations/sessions/${started.sessionId}/export`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { chunks: { chunk_id: string; summary: string }[] };
      expect(body.chunks.map((c) => [c.chunk_id, c.summary])).toEqual([
        ['c0', ''],
        ['c1', 'kept'],
        ['c2', ''],
      ]);
    } finally {
      await server.close();
    }
  });
});
