import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDocument } from '../../commands/search/removeDocument.js';
import { openPglite } from '../../infra/postgres/database.js';
import type { SearchInput, SearchOutput } from '../../queries/search/searchDocuments.js';
import { loadConfig } from '../../src/config.js';
import type { Position } from '../../src/domain/position.js';
import { commandContext } from '../../src/engine/commands.js';
import { openLedger, startServer, type Ledger, type RunningServer } from '../../src/main.js';
import { type OperationContext } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import { startApiServer, type ApiServer } from '../api/apiServer.js';
import { runCtx } from '../support/cli.js';
import { modelEnv, tempDataDir } from '../support/ledger.js';
import { EMBEDDING_MODEL, itWith } from '../support/requirements.js';

const semanticEnabled = EMBEDDING_MODEL.available;
const MODES = semanticEnabled ? (['keyword', 'semantic', 'hybrid'] as const) : (['keyword'] as const);

const context = (extra: Partial<OperationContext> = {}): OperationContext => ({
  actor: { subject: 'test', tenant: null, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: DEFAULT_PROJECT,
  ...extra,
});

const QUERIES = ['refresh access tokens', 'card payments retried', 'session tokens expire'];
/** Every document mentions one of these words, so this query lists them all. */
const EVERYTHING = 'tokens payments sessions';

const FIRST = [
  {
    source_id: 'auth.md',
    title: 'Authentication',
    body: 'Access tokens expire after one hour. The session service refreshes tokens in the background.',
  },
  {
    source_id: 'payments.md',
    title: 'Payments',
    body: 'Failed card payments are retried three times with exponential backoff.',
  },
  {
    source_id: 'legacy.md',
    title: 'Legacy login',
    body: 'The old login page issued session tokens that never expired.',
  },
];
const NEW_DOCUMENT = {
  source_id: 'sessions.md',
  title: 'Sessions',
  body: 'Sessions end when their refresh tokens are revoked by an administrator.',
};
const CHANGED_AUTH = {
  ...FIRST[0]!,
  body: 'Access tokens now expire after fifteen minutes; refresh tokens rotate on every use.',
};

describe('search as of a past position', () => {
  let ledger: Ledger;
  let server: RunningServer;
  let client: Client;
  let dataDir: string;
  const logs: { msg?: string; model?: string; position?: string }[] = [];
  /** Positions after the first ingest, and after the changes that followed. */
  let before: Position;
  let head: Position;
  let firstRecordedBy: string;
  let legacyId: string;
  /** What search answered right after the first ingest, per mode and query. */
  const answeredThen = new Map<string, SearchOutput>();

  /** Keyword search unless the input says otherwise: the default would be hybrid, the model being loaded. */
  const search = async (input: SearchInput, extra?: Partial<OperationContext>) =>
    (await ledger.operation('search').run({ mode: 'keyword', ...input }, context(extra))) as SearchOutput;
  const ingest = async (documents: object[]) => {
    const output = (await ledger
      .operation('documents.ingest_batch')
      .run({ source: 'notes', documents }, context())) as {
      results: { id: string; source_id: string }[];
    };
    await ledger.catchUp();
    return output.results;
  };
  const builds = (at: string) =>
    logs.filter((l) => l.msg === 'built a search index as of a past position' && l.position === at);
  const asOfSchemaCount = async () =>
    (
      await ledger.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_namespace WHERE nspname LIKE 'search_asof_%'`,
      )
    )[0]!.n;

  beforeAll(async () => {
    dataDir = tempDataDir('ctx-asof-');
    ledger = await openLedger(
      loadConfig({
        env: { ...modelEnv(), CTX_SEARCH__AS_OF_CACHE: '2' },
        overrides: { storage: { dataDir }, server: { bind: '127.0.0.1:0' } },
      }),
      {
        logger: pino(
          { level: 'info' },
          { write: (line: string) => logs.push(JSON.parse(line) as (typeof logs)[number]) },
        ),
      },
    );
    server = await startServer(ledger);
    client = new Client({ name: 'as-of', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));

    const first = await ingest(FIRST);
    legacyId = first.find((r) => r.source_id === 'legacy.md')!.id;
    before = await ledger.store.headPosition();
    for (const mode of MODES) {
      for (const query of [...QUERIES, EVERYTHING]) {
        answeredThen.set(`${mode}:${query}`, await search({ query, mode, limit: 20, explain: true }));
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    firstRecordedBy = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 20));

    await ingest([NEW_DOCUMENT, CHANGED_AUTH]);
    await removeDocument(
      ledger.store,
      { documentId: legacyId, reason: 'retired' },
      commandContext(context().actor),
    );
    await ledger.catchUp();
    head = await ledger.store.headPosition();
  }, 180_000);

  afterAll(async () => {
    await client.close().catch(() => undefined);
    await server.close().catch(() => undefined);
  });

  it('answers at the head exactly as the live search does, in every mode', async () => {
    // pg_textsearch counts replaced and removed chunks in its BM25 statistics until its index is
    // rebuilt; the as-of index is built fresh, so it matches a rebuilt live index score for score.
    await ledger.projections.rebuild('keyword');
    for (const mode of MODES) {
      for (const query of [...QUERIES, EVERYTHING]) {
        const live = await search({ query, mode, limit: 20, explain: true });
        expect(live.results.length).toBeGreaterThan(0);
        expect(await search({ query, mode, limit: 20, explain: true, asOf: head })).toEqual(live);
      }
    }
  }, 120_000);

  it('answers at a past position exactly as search answered then', async () => {
    for (const mode of MODES) {
      for (const query of [...QUERIES, EVERYTHING]) {
        const then = await search({ query, mode, limit: 20, explain: true, asOf: before });
        expect(then).toEqual(answeredThen.get(`${mode}:${query}`));
      }
    }
  }, 120_000);

  it('differs from the live search by exactly the documents added, changed and removed since', async () => {
    for (const mode of MODES) {
      const live = await search({ query: EVERYTHING, mode, limit: 20 });
      const then = await search({ query: EVERYTHING, mode, limit: 20, asOf: before });
      const liveIds = new Set(live.results.map((r) => r.source_id));
      const thenIds = new Set(then.results.map((r) => r.source_id));
      expect([...liveIds].filter((id) => !thenIds.has(id))).toEqual(['sessions.md']);
      expect([...thenIds].filter((id) => !liveIds.has(id))).toEqual(['legacy.md']);
      const snippet = (output: SearchOutput) =>
        output.results.find((r) => r.source_id === 'auth.md')?.snippet ?? '';
      expect(snippet(then)).toContain('one hour');
      expect(snippet(live)).toContain('fifteen minutes');
    }
  }, 120_000);

  it('resolves a timestamp to the last position at or before it', async () => {
    const byTime = await search({ query: EVERYTHING, limit: 20, asOf: firstRecordedBy });
    expect(byTime).toEqual(await search({ query: EVERYTHING, limit: 20, asOf: before }));
    const beforeEverything = await search({ query: EVERYTHING, limit: 20, asOf: '2000-01-01T00:00:00Z' });
    expect(beforeEverything.results).toEqual([]);
  }, 60_000);

  itWith(
    EMBEDDING_MODEL,
    'builds the semantic index from the embedding cache, embedding no chunk again',
    async () => {
      const cachedChunks = async () =>
        (
          await ledger.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM embedding_cache WHERE model NOT LIKE '%#query'`,
          )
        )[0]!.n;
      const [, middle] = await ledger.store.readAll({
        maxCount: 2,
        filter: { eventTypes: ['DocumentIngested'] },
      });
      const cached = await cachedChunks();
      const output = await search({ query: 'session tokens', mode: 'semantic', asOf: middle!.position });
      expect(output.results.length).toBeGreaterThan(0);
      expect(builds(middle!.position).map((b) => b.model)).toEqual(['semantic']);
      expect(await cachedChunks()).toBe(cached);
    },
    60_000,
  );

  it('builds a position once for concurrent callers, reports progress, and keeps at most as_of_cache positions', async () => {
    const ingested = await ledger.store.readAll({ filter: { eventTypes: ['DocumentIngested'] } });
    const [first, second] = ingested.map((e) => e.position);
    const progress: Record<string, unknown>[] = [];
    const outputs = await Promise.all(
      [1, 2, 3].map(() => search({ query: 'tokens', asOf: first! }, { onProgress: (p) => progress.push(p) })),
    );
    expect(outputs[1]).toEqual(outputs[0]);
    expect(outputs[2]).toEqual(outputs[0]);
    expect(outputs[0]!.results.map((r) => r.source_id)).toEqual(['auth.md']);
    expect(builds(first!)).toHaveLength(1);
    expect(progress[0]).toMatchObject({ model: 'keyword', position: first, processedEvents: 1 });

    await search({ query: 'tokens', asOf: first! });
    expect(builds(first!)).toHaveLength(1);

    // Two more positions push the first out of a cache of two: it is dropped, and built again when asked.
    await search({ query: 'tokens', asOf: second! });
    await search({ query: 'tokens', asOf: before });
    expect(await asOfSchemaCount()).toBe(2);
    await search({ query: 'tokens', asOf: first! });
    expect(builds(first!)).toHaveLength(2);
    expect(await asOfSchemaCount()).toBe(2);
  }, 120_000);

  it('rejects a position beyond the head and a malformed as-of, changing nothing', async () => {
    const [major] = head.split('-');
    const beyond = `${String(BigInt(major!) + 1n).padStart(20, '0')}-00000000000000000000`;
    await expect(search({ query: 'tokens', asOf: beyond })).rejects.toThrow(/beyond the head of the ledger/);
    await expect(search({ query: 'tokens', asOf: 'last tuesday-ish' })).rejects.toThrow(
      /expected a position from the event history \(e\.g\. 779-1, or 0 for before the first event\) or an ISO 8601 time with Z or its UTC offset/,
    );

    const overMcp = await client.callTool({ name: 'context.search', arguments: { query: 'tokens', as_of: beyond, mode: 'keyword' } });
    expect(overMcp.isError).toBe(true);
    expect(JSON.stringify(overMcp.content)).toMatch(/beyond the head of the ledger/);
    expect(await ledger.store.headPosition()).toBe(head);
  });

  it('answers as of a past position over MCP and the tool API', async () => {
    const expected = await search({ query: EVERYTHING, asOf: before });
    const overMcp = await client.callTool({
      name: 'context.search',
      arguments: { query: EVERYTHING, as_of: before, mode: 'keyword' },
    });
    expect(overMcp.isError).toBeFalsy();
    expect(overMcp.structuredContent).toEqual({ ...expected, mode: 'keyword' });
    const overHttp = await fetch(`${server.url}/tools/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: EVERYTHING, asOf: before, mode: 'keyword' }),
    });
    expect(overHttp.status).toBe(200);
    // The tool API keeps to its fixed fields: which mode ran is for the other surfaces.
    const { mode: _mode, ...toolAnswer } = expected;
    expect(await overHttp.json()).toEqual(toolAnswer);
  });

  it('drops every as-of schema when the ledger closes', async () => {
    expect(await asOfSchemaCount()).toBeGreaterThan(0);
    await client.close();
    await server.close();
    const db = await openPglite(path.join(dataDir, 'pgdata'));
    try {
      const [row] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_namespace WHERE nspname LIKE 'search_asof_%'`,
      );
      expect(row!.n).toBe(0);
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe('search as of a past position over /api/v1', () => {
  let api: ApiServer;
  let before: string;

  beforeAll(async () => {
    api = await startApiServer();
    const ingest = (documents: object[]) =>
      api.ledger
        .operation('documents.ingest_batch')
        .run({ source: 'notes', documents }, context({ project: 'acme' }));
    await ingest(FIRST);
    await api.ledger.catchUp();
    before = await api.ledger.store.headPosition();
    await ingest([NEW_DOCUMENT]);
    await api.ledger.catchUp();
  }, 120_000);
  afterAll(async () => {
    await api.close();
  });

  it('answers with the documents there were then', async () => {
    const token = api.token(['search:read']);
    const now = await api.call('POST', '/search', { token, body: { query: 'tokens', top_k: 10 } });
    const then = await api.call('POST', '/search', {
      token,
      body: { query: 'tokens', top_k: 10, as_of: before },
    });
    expect(now.status).toBe(200);
    expect(then.status).toBe(200);
    const paths = (body: Record<string, unknown>) =>
      (body.results as { metadata: { path: string } }[]).map((r) => r.metadata.path).sort();
    expect(paths(now.body)).toEqual(['auth.md', 'legacy.md', 'sessions.md']);
    expect(paths(then.body)).toEqual(['auth.md', 'legacy.md']);
  });

  it('answers a position beyond the head and a malformed as_of in the API error format', async () => {
    const token = api.token(['search:read']);
    const beyond = await api.call('POST', '/search', {
      token,
      body: { query: 'tokens', as_of: '99999999999999999999-00000000000000000000' },
    });
    expect(beyond.status).toBe(400);
    expect(JSON.stringify(beyond.body)).toMatch(/beyond the head of the ledger/);
    expect((beyond.body.error as { correlation_id: string }).correlation_id).toBe(
      beyond.headers.get('x-correlation-id'),
    );

    const malformed = await api.call('POST', '/search', { token, body: { query: 'tokens', as_of: 'soon' } });
    expect(malformed.status).toBe(400);
    expect(JSON.stringify(malformed.body)).toMatch(/as_of/);
    expect((malformed.body.error as { correlation_id: string }).correlation_id).toBe(
      malformed.headers.get('x-correlation-id'),
    );
  });
});

describe('ctx search --as-of', () => {
  it('prints what search would have returned at a position from ctx history', async () => {
    const dataDir = tempDataDir('ctx-asof-cli-');
    const env = { CTX_EMBEDDINGS__PROVIDER: 'none' };
    const file = (name: string, documents: object[]) => {
      const at = path.join(dataDir, name);
      writeFileSync(at, documents.map((d) => JSON.stringify(d)).join('\n'));
      return at;
    };
    const ingest = await runCtx(
      ['ingest', '--jsonl', file('first.jsonl', FIRST), '--source', 'notes', '--data-dir', dataDir],
      env,
    );
    expect(ingest.code).toBe(0);
    const history = await runCtx(
      ['history', '--backwards', '--limit', '1', '--json', '--data-dir', dataDir],
      env,
    );
    const position = (JSON.parse(history.stdout) as { events: { position: string }[] }).events[0]!.position;
    expect(
      (
        await runCtx(
          [
            'ingest',
            '--jsonl',
            file('more.jsonl', [NEW_DOCUMENT]),
            '--source',
            'notes',
            '--data-dir',
            dataDir,
          ],
          env,
        )
      ).code,
    ).toBe(0);

    const then = await runCtx(
      ['search', 'tokens', '--as-of', position, '--json', '--data-dir', dataDir],
      env,
    );
    expect(then.code).toBe(0);
    const ids = (JSON.parse(then.stdout) as SearchOutput).results.map((r) => r.source_id).sort();
    expect(ids).toEqual(['auth.md', 'legacy.md']);

    const beyond = await runCtx(
      ['search', 'tokens', '--as-of', '99999999999999999999-00000000000000000000', '--data-dir', dataDir],
      env,
    );
    expect(beyond.code).toBe(2);
    expect(beyond.stderr).toMatch(/beyond the head of the ledger/);
  }, 120_000);
});
