import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withEmbeddingCache } from '../../infra/embeddings/cachedEmbedder.js';
import { createLocalEmbedder } from '../../infra/embeddings/localEmbedder.js';
import { createMemoryEmbeddingCache } from '../../infra/embeddings/memoryEmbeddingCache.js';
import type { JobStatusResponse } from '../../src/services/jobResponses.js';
import { ALL_SCOPES, ingest, startApiServer, type ApiServer } from '../api/apiServer.js';
import { newEvents } from '../support/events.js';
import { tempDataDir } from '../support/ledger.js';
import { EMBEDDING_MODEL, itWith, testModelDir } from '../support/requirements.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition: one sample per line that is not a comment. */
const parseExposition = (text: string): { samples: Sample[]; types: Map<string, string> } => {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`Not an exposition line: ${line}`);
    const labels = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return { samples, types };
};

/** The value of the one sample with this name whose labels include `labels`, or undefined. */
const valueOf = (samples: readonly Sample[], name: string, labels: Record<string, string> = {}) => {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
};

/** A project folder of a few small files to index. */
const makeRepo = (files: number) => {
  const root = tempDataDir('ctx-metrics-repo-');
  mkdirSync(path.join(root, 'src'));
  for (let i = 0; i < files; i++)
    writeFileSync(path.join(root, 'src', `part${i}.ts`), `export const part${i} = (x: number) => x + ${i};\n`);
  return root;
};

const runJob = async (api: ApiServer, project: string, repo: string) => {
  const context = { actor: { subject: 'test', tenant: project, via: 'cli' as const }, correlationId: crypto.randomUUID(), project };
  const { job_id } = (await api.ledger
    .operation('start_indexing_background')
    .run({ repo_path: repo, project_id: project }, context)) as { job_id: string };
  await expect
    .poll(
      async () =>
        ((await api.ledger.operation('get_job_status').run({ job_id }, context)) as JobStatusResponse).status,
      { timeout: 60_000, interval: 100 },
    )
    .toBe('completed');
  await api.ledger.projections.waitFor(await api.ledger.store.headPosition(), { timeoutMs: 20_000 });
  return job_id;
};

describe('/metrics with authentication on', () => {
  let api: ApiServer;
  let admin: string;
  /** The deployment's metrics are the operator's: an admin of the default tenant. */
  let operator: string;
  const origin = () => api.server.url;

  const scrape = async () => {
    const response = await fetch(`${origin()}/metrics`, { headers: { authorization: `Bearer ${operator}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await response.text());
  };

  beforeAll(async () => {
    api = await startApiServer();
    admin = api.token(['admin'], 'acme', 'acme-admin');
    operator = api.token(['admin'], 'default', 'operator');
  });
  afterAll(() => api.close());

  it('needs credentials, the admin scope, and the operator', async () => {
    const anonymous = await fetch(`${origin()}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: { code: 'unauthorized' } });
    const withoutAdmin = api.token(ALL_SCOPES.filter((s) => s !== 'admin'));
    const forbidden = await fetch(`${origin()}/metrics`, { headers: { authorization: `Bearer ${withoutAdmin}` } });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ error: { code: 'forbidden', message: expect.stringContaining("'admin'") as string } });
    const tenantAdmin = await fetch(`${origin()}/metrics`, { headers: { authorization: `Bearer ${admin}` } });
    expect(tenantAdmin.status).toBe(403);
    expect(await tenantAdmin.json()).toMatchObject({ error: { code: 'forbidden', message: expect.stringContaining("'default' tenant") as string } });
    const { key } = await api.apiKey(['admin'], 'default');
    const byKey = await fetch(`${origin()}/metrics`, { headers: { 'x-api-key': key } });
    expect(byKey.status).toBe(200);
  });

  it('times requests per method, route pattern and status', async () => {
    const searcher = api.token(['search:read', 'connectors:read'], 'acme', 'timed');
    const missing = crypto.randomUUID();
    const before = (await scrape()).samples;
    for (let i = 0; i < 3; i++)
      expect((await api.call('POST', '/search', { token: searcher, body: { query: 'anything' } })).status).toBe(200);
    for (let i = 0; i < 2; i++)
      expect((await api.call('GET', `/connectors/${missing}`, { token: searcher })).status).toBe(404);
    const { samples, types } = await scrape();

    const name = 'ctx_http_request_duration_seconds';
    expect(types.get(name)).toBe('histogram');
    const search = { method: 'POST', route: '/api/v1/search', status: '200' };
    const connector = { method: 'GET', route: '/api/v1/connectors/:id', status: '404' };
    const delta = (labels: Record<string, string>) =>
      (valueOf(samples, `${name}_count`, labels) ?? 0) - (valueOf(before, `${name}_count`, labels) ?? 0);
    expect(delta(search)).toBe(3);
    expect(delta(connector)).toBe(2);
    expect(valueOf(samples, `${name}_sum`, search)).toBeGreaterThan(0);
    // Buckets are cumulative and the last one holds every request.
    const buckets = samples.filter(
      (s) => s.name === `${name}_bucket` && Object.entries(search).every(([k, v]) => s.labels[k] === v),
    );
    expect(buckets.map((b) => b.value)).toEqual([...buckets.map((b) => b.value)].sort((a, b) => a - b));
    expect(buckets.at(-1)).toMatchObject({ labels: { le: '+Inf' }, value: valueOf(samples, `${name}_count`, search) });
    // Routes are patterns: a raw URL never becomes a label.
    expect(samples.some((s) => Object.values(s.labels).some((v) => v.includes(missing)))).toBe(false);
  });

  it('counts every appended event by type', async () => {
    const headBefore = await api.ledger.store.headPosition();
    const before = (await scrape()).samples;
    await ingest(api, 'acme', [
      { source_id: 'counted/1.md', body: 'first counted note' },
      { source_id: 'counted/2.md', body: 'second counted note' },
    ]);
    const { samples, types } = await scrape();
    expect(types.get('ctx_events_appended_total')).toBe('counter');
    const appended = await api.ledger.store.readAll({ from: headBefore, maxCount: 10_000 });
    const byType = new Map<string, number>();
    for (const event of appended) byType.set(event.type, (byType.get(event.type) ?? 0) + 1);
    expect(byType.get('DocumentIngested')).toBe(2);
    for (const [type, count] of byType) {
      const counted =
        (valueOf(samples, 'ctx_events_appended_total', { type }) ?? 0) -
        (valueOf(before, 'ctx_events_appended_total', { type }) ?? 0);
      expect(counted, type).toBe(count);
    }
  });

  it('reports the lag, state and throughput of every projection', async () => {
    const names = (await api.ledger.projections.status()).map((s) => s.name);
    await api.ledger.projections.stop();
    try {
      await api.ledger.store.append(`job-${crypto.randomUUID()}`, newEvents(4), 'no_stream');
      const behind = (await scrape()).samples;
      for (const projection of names) {
        expect(valueOf(behind, 'ctx_projection_lag_events', { projection }), projection).toBe(4);
        expect(valueOf(behind, 'ctx_projection_lag_seconds', { projection })).toBeGreaterThanOrEqual(0);
        expect(valueOf(behind, 'ctx_projection_state', { projection, state: 'stopped' })).toBe(1);
        expect(valueOf(behind, 'ctx_projection_state', { projection, state: 'running' })).toBe(0);
      }
    } finally {
      await api.ledger.projections.start();
    }
    await api.ledger.projections.waitFor(await api.ledger.store.headPosition());
    const caughtUp = (await scrape()).samples;
    for (const projection of names) {
      expect(valueOf(caughtUp, 'ctx_projection_lag_events', { projection })).toBe(0);
      expect(valueOf(caughtUp, 'ctx_projection_state', { projection, state: 'running' })).toBe(1);
      expect(valueOf(caughtUp, 'ctx_projection_events_per_second', { projection })).toBeGreaterThanOrEqual(0);
    }
  });

  it('reports indexing jobs by status, lists them per tenant, and shows the embedding queue', async () => {
    const repo = makeRepo(3);
    const mine = await runJob(api, 'acme', repo);
    const theirs = await runJob(api, 'globex', repo);
    const { samples } = await scrape();
    expect(valueOf(samples, 'ctx_jobs', { status: 'completed' })).toBe(2);
    expect(valueOf(samples, 'ctx_embedding_queue_texts')).toBe(0);
    expect(valueOf(samples, 'ctx_embedding_calls_in_flight')).toBe(0);

    const listed = await api.call('GET', '/jobs', { token: admin });
    expect(listed.status).toBe(200);
    const jobs = listed.body.jobs as Record<string, unknown>[];
    expect(jobs.map((j) => j.job_id)).toEqual([mine]);
    const [job] = jobs;
    expect(job).toMatchObject({ project_id: 'acme', status: 'completed', percent: 100, message: 'Indexing complete' });
    expect(Date.parse(job!.updated_at as string)).toBeGreaterThanOrEqual(Date.parse(job!.created_at as string));
    expect(job!.updated_at).not.toBe(job!.created_at);

    expect((await api.call('GET', '/jobs?project=globex', { token: admin })).body).toEqual({ jobs: [] });
    expect((await api.call('GET', '/jobs?status=running', { token: admin })).body).toEqual({ jobs: [] });
    const globexAdmin = api.token(['admin'], 'globex', 'their-operator');
    const theirList = await api.call('GET', '/jobs', { token: globexAdmin });
    expect((theirList.body.jobs as { job_id: string }[]).map((j) => j.job_id)).toEqual([theirs]);

    const bad = await api.call('GET', '/jobs?status=sleeping', { token: admin });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'VALIDATION_ERROR', correlation_id: expect.any(String) as string } });
    expect((await api.call('GET', '/jobs', { token: api.token(ALL_SCOPES.filter((s) => s !== 'admin')) })).status).toBe(
      403,
    );
  }, 150_000);
});

describe('/metrics and admin endpoints with authentication off', () => {
  let api: ApiServer;
  beforeAll(async () => {
    api = await startApiServer({ CTX_AUTH__MODE: 'off' });
  });
  afterAll(() => api.close());

  it('are open, and the jobs list shows every project', async () => {
    const response = await fetch(`${api.server.url}/metrics`);
    expect(response.status).toBe(200);
    const { samples } = parseExposition(await response.text());
    expect(valueOf(samples, 'ctx_projection_state', { projection: 'documents', state: 'running' })).toBe(1);

    const repo = makeRepo(2);
    const jobs = [await runJob(api, 'acme', repo), await runJob(api, 'globex', repo)];
    const listed = await api.call('GET', '/jobs');
    expect(listed.status).toBe(200);
    expect((listed.body.jobs as { job_id: string }[]).map((j) => j.job_id).sort()).toEqual([...jobs].sort());
    const onlyGlobex = await api.call('GET', '/jobs?project=globex');
    expect((onlyGlobex.body.jobs as { job_id: string }[]).map((j) => j.job_id)).toEqual([jobs[1]]);
  }, 150_000);

  itWith(EMBEDDING_MODEL, 'shows the texts queued for the embedding model while it embeds them', async () => {
    const embedder = withEmbeddingCache(
      await createLocalEmbedder({ modelDir: testModelDir! }),
      createMemoryEmbeddingCache(),
    );
    const queueNow = async () => {
      const { samples } = parseExposition(await (await fetch(`${api.server.url}/metrics`)).text());
      return [valueOf(samples, 'ctx_embedding_queue_texts'), valueOf(samples, 'ctx_embedding_calls_in_flight')];
    };
    try {
      const texts = Array.from({ length: 400 }, (_, i) => `passage ${i} about projections, rebuilds and metrics`);
      let done = false;
      const embedding = embedder.embed(texts, 'document').finally(() => (done = true));
      const seen: (number | undefined)[][] = [];
      while (!done) seen.push(await queueNow());
      await embedding;
      expect(seen).toContainEqual([400, 1]);
      expect(await queueNow()).toEqual([0, 0]);
    } finally {
      await embedder.close();
    }
  }, 120_000);
});
