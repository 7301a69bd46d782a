import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, startApiServer, type ApiServer } from '../api/apiServer.js';

interface RebuildView {
  processed_events: number;
  total_events: number;
  percent: number;
  eta_seconds: number | null;
  started_at: string;
}
interface ProjectionView {
  name: string;
  state: string;
  lag_events: number;
  rebuild: RebuildView | null;
}

const TOPICS = ['ledger', 'projection', 'rebuild', 'search', 'embedding', 'checkpoint', 'tenant'];
const QUERIES = ['ledger checkpoint', 'projection rebuild', 'tenant search', 'embedding'];
const DOCUMENTS = 400;

const corpus = Array.from({ length: DOCUMENTS }, (_, i) => ({
  source_id: `notes/${i}.md`,
  title: `Note ${i} on ${TOPICS[i % TOPICS.length]}`,
  body: `Note ${i} explains the ${TOPICS[i % TOPICS.length]} and the ${TOPICS[(i * 3) % TOPICS.length]} of the system, part ${i % 11}.`,
}));

describe('rebuilding a projection over REST', () => {
  let api: ApiServer;
  let admin: string;
  let searcher: string;

  const projectionsNow = async (): Promise<ProjectionView[]> => {
    const response = await api.call('GET', '/projections', { token: admin });
    expect(response.status).toBe(200);
    return response.body.projections as ProjectionView[];
  };
  const search = (query: string) => api.call('POST', '/search', { token: searcher, body: { query, top_k: 10 } });
  const resultsOf = async () =>
    Object.fromEntries(await Promise.all(QUERIES.map(async (q) => [q, (await search(q)).body.results] as const)));

  beforeAll(async () => {
    // Small batches make the rebuild take long enough to watch it.
    api = await startApiServer({ CTX_PROJECTIONS__BATCH_SIZE: '2' });
    admin = api.token(['admin'], 'default', 'operator');
    searcher = api.token(['search:read'], 'acme', 'searcher');
    const raised = await api.call('PATCH', '/config', {
      token: api.token(['config:write', 'admin'], 'default', 'operator'),
      body: { rate_limits: { search_per_minute: 100_000 } },
    });
    expect(raised.status).toBe(200);
    // The read models catch up after the ingest rather than racing it document by document.
    await api.ledger.projections.stop();
    await api.ledger
      .operation('documents.ingest_batch')
      .run(
        { source: 'filesystem', documents: corpus },
        { actor: { subject: 'test', tenant: 'acme', via: 'cli' }, correlationId: crypto.randomUUID(), project: 'acme' },
      );
    await api.ledger.projections.start();
    await api.ledger.projections.waitFor(await api.ledger.store.headPosition(), { timeoutMs: 100_000 });
  }, 120_000);
  afterAll(() => api.close());

  it('serves every search from the live index while it rebuilds, shows progress, then swaps', async () => {
    const before = await resultsOf();
    expect(Object.values(before).every((results) => Array.isArray(results) && results.length > 0)).toBe(true);

    const failures: string[] = [];
    const differing: string[] = [];
    let queries = 0;
    let rebuilding = true;
    const traffic = Promise.all(
      [0, 1].map(async () => {
        while (rebuilding) {
          for (const query of QUERIES) {
            const response = await search(query);
            queries++;
            if (response.status !== 200) failures.push(`${response.status} ${JSON.stringify(response.body)}`);
            else if (JSON.stringify(response.body.results) !== JSON.stringify(before[query])) differing.push(query);
          }
        }
      }),
    );

    const seen: RebuildView[] = [];
    try {
      // Two requests at once: one starts the rebuild, the other finds it running.
      const [first, second] = await Promise.all(
        [0, 1].map(() => api.call('POST', '/projections/keyword/rebuild', { token: admin })),
      );
      const [started, refused] = first!.status === 202 ? [first!, second!] : [second!, first!];
      expect(started.status).toBe(202);
      expect(started.body).toEqual({ name: 'keyword', state: 'rebuilding' });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        error: { code: 'CONFLICT_ERROR', detail: "Projection 'keyword' is already being rebuilt", retryable: false },
      });
      expect(refused.headers.get('x-correlation-id')).toBe(
        (refused.body.error as { correlation_id: string }).correlation_id,
      );

      for (;;) {
        const keyword = (await projectionsNow()).find((p) => p.name === 'keyword')!;
        if (keyword.state !== 'rebuilding') break;
        if (keyword.rebuild) seen.push(keyword.rebuild);
        // Well within the admin budget of 600 a minute, however long the searches make the rebuild.
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      rebuilding = false;
      await traffic;
    }

    expect(failures).toEqual([]);
    expect(differing).toEqual([]);
    expect(queries).toBeGreaterThan(QUERIES.length);
    // Progress counts up towards the events of the ledger, with an estimate of the time left.
    const events = (await api.ledger.store.readAll({ maxCount: 100_000 })).length;
    const midway = seen.filter((r) => r.processed_events > 0 && r.processed_events < r.total_events);
    expect(midway.length).toBeGreaterThan(0);
    for (const r of midway) {
      expect(r.total_events).toBe(events);
      expect(r.percent).toBeCloseTo((100 * r.processed_events) / r.total_events, 0);
      expect(r.eta_seconds).toBeGreaterThanOrEqual(0);
      expect(Date.parse(r.started_at)).toBeLessThanOrEqual(Date.now());
    }
    expect(midway.map((r) => r.processed_events)).toEqual([...midway.map((r) => r.processed_events)].sort((a, b) => a - b));

    const keyword = (await projectionsNow()).find((p) => p.name === 'keyword')!;
    expect(keyword).toMatchObject({ state: 'running', rebuild: null, lag_events: 0 });
    expect(await resultsOf()).toEqual(before);
  }, 120_000);

  it('answers 404 for a projection it does not have', async () => {
    const response = await api.call('POST', '/projections/nope/rebuild', { token: admin });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ error: { code: 'NOT_FOUND_ERROR', detail: "No projection named 'nope'" } });
  });

  it('lists every projection with its lag and no rebuild when none runs', async () => {
    const projections = await projectionsNow();
    expect(projections.map((p) => p.name)).toEqual(
      expect.arrayContaining(['streams', 'documents', 'keyword', 'jobs', 'api_keys']),
    );
    await api.ledger.projections.waitFor(await api.ledger.store.headPosition());
    for (const p of await projectionsNow())
      expect(p).toMatchObject({ state: 'running', lag_events: 0, lag_seconds: 0, last_error: null, rebuild: null });
  });

  it('needs credentials and the admin scope', async () => {
    const withoutAdmin = api.token(
      ALL_SCOPES.filter((s) => s !== 'admin'),
      'acme',
      'not-an-admin',
    );
    for (const [method, route] of [
      ['GET', '/projections'],
      ['POST', '/projections/keyword/rebuild'],
    ] as const) {
      expect((await api.call(method, route)).status).toBe(401);
      const forbidden = await api.call(method, route, { token: withoutAdmin });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toMatchObject({ error: { code: 'AUTHORIZATION_ERROR' } });
    }
    const keyword = (await projectionsNow()).find((p) => p.name === 'keyword')!;
    expect(keyword.state).toBe('running');
  });
});
