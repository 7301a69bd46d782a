import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { openTestLedger } from '../support/ledger.js';

interface ToolResult {
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

const chunks = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    chunk_id: String(i + 1),
    position: i + 1,
    text: `chunk ${i + 1}`,
  }));

describe('the annotation tools through the MCP client', () => {
  let server: RunningServer;
  let client: Client;
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as unknown as ToolResult;
  /** The seed's wrapping: exactly one text item holding the JSON. */
  const ok = async (name: string, args: Record<string, unknown>) => {
    const result = await call(name, args);
    expect(result.isError, result.content[0]?.text).toBeFalsy();
    expect(result.content).toHaveLength(1);
    expect(result.content[0]!.type).toBe('text');
    const body = JSON.parse(result.content[0]!.text) as Record<string, unknown>;
    expect(result.structuredContent).toEqual(body);
    return body;
  };
  const failure = async (name: string, args: Record<string, unknown>) => {
    const result = await call(name, args);
    expect(result.isError).toBe(true);
    expect(result.content).toHaveLength(1);
    return JSON.parse(result.content[0]!.text) as { type: string; message: string; issues?: unknown[] };
  };
  const start = async (count = 3) =>
    (await ok('start_session', { config: { chunks: chunks(count) } })).sessionId as string;

  beforeAll(async () => {
    server = await startServer(await openTestLedger());
    client = new Client({ name: 'annotations-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  it('lists the six seed tools and the history tools, each with input and output schemas', async () => {
    const { tools } = await client.listTools();
    for (const name of [
      'start_session',
      'annotate_chunk',
      'annotate_chunks',
      'add_relation',
      'get_progress',
      'export_annotations',
      'annotations.history',
      'annotations.diff',
    ]) {
      const tool = tools.find((t) => t.name === name);
      expect(tool?.inputSchema.type, name).toBe('object');
      expect(tool?.outputSchema?.type, name).toBe('object');
    }
    const annotate = tools.find((t) => t.name === 'annotate_chunk')!;
    expect(annotate.inputSchema.required).toEqual(['sessionId', 'chunkId']);
    expect(JSON.stringify(annotate.inputSchema.properties)).toContain('fee_schedule');
  });

  it('starts a session and answers with the seed shape', async () => {
    const body = await ok('start_session', { config: { chunks: chunks(60) } });
    const { sessionId, ...rest } = body;
    expect(sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(rest).toEqual({ chunkCount: 60, message: 'Session created successfully' });
  });

  it('starts a session too large for one append, and annotates its last chunk', async () => {
    // Six chunks of 300 kB: about 1.8 MB of events, where one append takes at most 1 MiB.
    const large = chunks(6).map((chunk) => ({ ...chunk, text: chunk.chunk_id.repeat(300_000) }));
    const { sessionId, chunkCount } = await ok('start_session', { config: { chunks: large } });
    expect(chunkCount).toBe(6);
    await ok('annotate_chunk', { sessionId, chunkId: '6', tags: ['last'] });
    expect(await ok('get_progress', { sessionId })).toMatchObject({ totalChunks: 6, annotatedChunks: 1 });
  });

  it('annotates a chunk and returns it in the export shape', async () => {
    const sessionId = await start();
    const body = await ok('annotate_chunk', {
      sessionId,
      chunkId: '2',
      categories: ['fee_schedule'],
      labels: ['Fee Schedule'],
      subtypes: { fee_schedule: 'participant_fee' },
      keywords: ['fees'],
    });
    expect(body).toEqual({
      chunk_id: '2',
      position: 2,
      categories: ['fee_schedule'],
      labels: ['Fee Schedule'],
      subtypes: { fee_schedule: 'participant_fee' },
      keywords: ['fees'],
      tags: [],
      relations: {},
      notes: '',
      summary: '',
    });
  });

  it('annotates a batch with partial success', async () => {
    const sessionId = await start();
    const body = await ok('annotate_chunks', {
      sessionId,
      annotations: [
        { chunkId: '1', categories: ['footnotes'] },
        { chunkId: 'missing', categories: ['footnotes'] },
        { chunkId: '3', categories: ['not-a-category'] },
      ],
    });
    expect(body.successCount).toBe(1);
    expect(body.errorCount).toBe(2);
    const results = body.results as {
      chunkId: string;
      success: boolean;
      data?: { categories: string[] };
      error?: { type: string };
    }[];
    expect(results[0]).toMatchObject({
      chunkId: '1',
      success: true,
      data: { chunk_id: '1', categories: ['footnotes'] },
    });
    expect(results[1]).toMatchObject({
      chunkId: 'missing',
      success: false,
      error: { type: 'ChunkNotFound' },
    });
    expect(results[2]).toMatchObject({ chunkId: '3', success: false, error: { type: 'ValidationError' } });
    const progress = await ok('get_progress', { sessionId });
    expect(progress).toMatchObject({ annotatedChunks: 1, pendingChunkIds: ['2', '3'] });
  });

  it('adds relations idempotently and exports them', async () => {
    const sessionId = await start();
    const relation = { sessionId, sourceChunkId: '1', targetChunkId: '2', relationType: 'dependencies' };
    expect(await ok('add_relation', relation)).toEqual({
      message: 'Relation added',
      sourceChunkId: '1',
      targetChunkId: '2',
      relationType: 'dependencies',
    });
    await ok('add_relation', relation);
    const exported = (await ok('export_annotations', { sessionId })) as { chunks: { relations: object }[] };
    expect(exported.chunks[0]!.relations).toEqual({ dependencies: ['2'] });
    const history = (await ok('annotations.history', { sessionId, chunkId: '2' })) as {
      events: { type: string }[];
    };
    expect(history.events.map((e) => e.type)).toEqual(['SessionChunksAdded', 'RelationAdded']);
  });

  it('reports progress with two decimals, pending ids in position order', async () => {
    const sessionId = await start(60);
    await ok('annotate_chunks', {
      sessionId,
      annotations: Array.from({ length: 58 }, (_, i) => ({ chunkId: String(i + 1), tags: ['done'] })),
    });
    expect(await ok('get_progress', { sessionId })).toEqual({
      totalChunks: 60,
      annotatedChunks: 58,
      pendingChunks: 2,
      completionPercentage: 96.67,
      pendingChunkIds: ['59', '60'],
    });
  });

  it('exports every chunk in the seed shape', async () => {
    const sessionId = await start(2);
    await ok('annotate_chunk', { sessionId, chunkId: '1', notes: 'n', summary: 's', tags: ['t'] });
    expect(await ok('export_annotations', { sessionId })).toEqual({
      chunks: [
        {
          chunk_id: '1',
          position: 1,
          categories: [],
          labels: [],
          subtypes: {},
          keywords: [],
          tags: ['t'],
          relations: {},
          notes: 'n',
          summary: 's',
        },
        {
          chunk_id: '2',
          position: 2,
          categories: [],
          labels: [],
          subtypes: {},
          keywords: [],
          tags: [],
          relations: {},
          notes: '',
          summary: '',
        },
      ],
    });
  });

  describe('errors', () => {
    it('InvalidConfig for an empty chunk list, with issues', async () => {
      const error = await failure('start_session', { config: { chunks: [] } });
      expect(error).toMatchObject({ type: 'InvalidConfig', message: 'Config validation failed' });
      expect(error.issues).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: ['config', 'chunks'] })]),
      );
    });

    it('InvalidConfig for duplicate chunk ids and for a missing config', async () => {
      const duplicate = await failure('start_session', { config: { chunks: [...chunks(2), ...chunks(1)] } });
      expect(duplicate.type).toBe('InvalidConfig');
      expect(JSON.stringify(duplicate.issues)).toContain("duplicate chunk_id '1'");
      expect((await failure('start_session', {})).type).toBe('InvalidConfig');
    });

    it('InvalidConfig when the named documents hold no chunks, and nothing is stored', async () => {
      const error = await failure('start_session', { config: { documentIds: [crypto.randomUUID()] } });
      expect(error.type).toBe('InvalidConfig');
    });

    it('SessionNotFound for an unknown session, on every session tool', async () => {
      const sessionId = crypto.randomUUID();
      for (const [name, args] of [
        ['annotate_chunk', { sessionId, chunkId: '1' }],
        ['annotate_chunks', { sessionId, annotations: [{ chunkId: '1' }] }],
        ['add_relation', { sessionId, sourceChunkId: '1', targetChunkId: '2', relationType: 'references' }],
        ['get_progress', { sessionId }],
        ['export_annotations', { sessionId }],
        ['annotations.history', { sessionId }],
        ['annotations.diff', { sessionId, from: new Date().toISOString() }],
      ] as const) {
        expect(await failure(name, args), name).toMatchObject({ type: 'SessionNotFound' });
      }
    });

    it('ChunkNotFound for an unknown chunk or relation end', async () => {
      const sessionId = await start();
      expect(await failure('annotate_chunk', { sessionId, chunkId: 'nope' })).toMatchObject({
        type: 'ChunkNotFound',
      });
      expect(
        await failure('add_relation', {
          sessionId,
          sourceChunkId: '1',
          targetChunkId: 'nope',
          relationType: 'footnotes',
        }),
      ).toMatchObject({ type: 'ChunkNotFound' });
    });

    it('ValidationError for a malformed uuid, a value outside the vocabulary or a self relation; nothing stored', async () => {
      const sessionId = await start();
      const malformed = await failure('annotate_chunk', { sessionId: 'not-a-uuid', chunkId: '1' });
      expect(malformed.type).toBe('ValidationError');
      expect(malformed.issues).toEqual([expect.objectContaining({ path: ['sessionId'] })]);
      const outside = await failure('annotate_chunk', {
        sessionId,
        chunkId: '1',
        subtypes: { fee_schedule: 'bogus' },
      });
      expect(outside.type).toBe('ValidationError');
      expect(
        (await failure('annotate_chunk', { sessionId, chunkId: '1', labels: ['fee schedule'] })).type,
      ).toBe('ValidationError');
      const self = await failure('add_relation', {
        sessionId,
        sourceChunkId: '1',
        targetChunkId: '1',
        relationType: 'references',
      });
      expect(self.type).toBe('ValidationError');
      const badType = await failure('add_relation', {
        sessionId,
        sourceChunkId: '1',
        targetChunkId: '2',
        relationType: 'cites',
      });
      expect(badType.type).toBe('ValidationError');
      expect(await ok('get_progress', { sessionId })).toMatchObject({ annotatedChunks: 0 });
      const history = (await ok('annotations.history', { sessionId })) as { events: { type: string }[] };
      expect(history.events.map((e) => e.type)).toEqual(['AnnotationSessionStarted', 'SessionChunksAdded']);
      expect((await failure('get_progress', { sessionId, asOf: 'yesterday-ish' })).type).toBe(
        'ValidationError',
      );
    });
  });
});
