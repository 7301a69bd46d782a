import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { annotationStream } from '../../src/domain/annotations.js';
import { streamId } from '../../src/domain/events.js';
import { toolStreamKey } from '../../src/domain/tools.js';
import { tempDataDir } from '../support/ledger.js';
import { ALL_SCOPES, ingest, startApiServer, type ApiServer } from './apiServer.js';

const EXAMPLE_TOOLS = path.resolve(import.meta.dirname, '../../examples/tools');

/** An agent whose prompt lists what `ctx.search` finds for a topic: it shows which project it ran in. */
const AGENT = `return {
  name = "briefing",
  description = "Lists the documents about a topic",
  arguments = { { name = "topic", description = "What to look for", required = true } },
  render = function(args, ctx)
    local found = ctx.search(args.topic, { mode = "keyword", limit = 10 })
    local lines = {}
    for _, hit in ipairs(found.results or {}) do lines[#lines + 1] = hit.title end
    return { system = "Brief on " .. args.topic, messages = { { role = "user", content = table.concat(lines, "\\n") } } }
  end,
}`;

interface Hit {
  id: string;
  title: string;
}

describe('tenancy on /tools, /agents and /api/v1/annotations', () => {
  let api: ApiServer;
  let acme: string;
  let globex: string;
  let acmeDocument: string;
  let globexDocument: string;

  const http = async (method: string, url: string, token: string, body?: unknown) => {
    const response = await fetch(`${api.server.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const search = async (token: string) =>
    ((await http('POST', '/tools/search', token, { query: 'quarterly ledger', mode: 'keyword' })).body as { results: Hit[] }).results;

  beforeAll(async () => {
    const agents = tempDataDir('ctx-agents-');
    writeFileSync(path.join(agents, 'briefing.lua'), AGENT);
    api = await startApiServer({ CTX_EXTENSIONS__TOOLS_DIR: EXAMPLE_TOOLS, CTX_EXTENSIONS__AGENTS_DIR: agents });
    acme = api.token(ALL_SCOPES, 'acme', 'alice');
    globex = api.token(ALL_SCOPES, 'globex', 'bob');
    await ingest(api, 'acme', [{ source_id: 'acme.md', title: 'Acme quarterly ledger', body: 'The quarterly ledger of acme.' }]);
    await ingest(api, 'globex', [{ source_id: 'globex.md', title: 'Globex quarterly ledger', body: 'The quarterly ledger of globex.' }]);
    acmeDocument = (await search(acme))[0]!.id;
    globexDocument = (await search(globex))[0]!.id;
  }, 60_000);
  afterAll(async () => api?.close());

  it("searches, gets and lists sources in the caller's tenant only", async () => {
    expect((await search(acme)).map((h) => h.title)).toEqual(['Acme quarterly ledger']);
    expect((await search(globex)).map((h) => h.title)).toEqual(['Globex quarterly ledger']);
    expect((await http('POST', '/tools/get', acme, { id: acmeDocument })).status).toBe(200);
    const foreign = await http('POST', '/tools/get', acme, { id: globexDocument });
    const missing = await http('POST', '/tools/get', acme, { id: crypto.randomUUID() });
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(foreign.body).toEqual({ error: { code: 'not_found', message: `No document with id ${globexDocument}` } });
    // Both tenants ingested one document from `filesystem`: each counts only its own.
    const sources = (await http('GET', '/tools/sources', globex)).body as { sources: { name: string; doc_count: number }[] };
    expect(sources.sources.find((s) => s.name === 'filesystem')?.doc_count).toBe(1);
  });

  it("runs Lua tools and agents in the caller's tenant and records the caller on the tool call", async () => {
    const related = await http('POST', '/tools/related_titles', globex, { topic: 'quarterly ledger' });
    expect(related.status, JSON.stringify(related.body)).toBe(200);
    expect(related.body).toEqual({ result: { topic: 'quarterly ledger', titles: [{ id: globexDocument, title: 'Globex quarterly ledger' }] } });

    const prompt = await http('POST', '/agents/briefing/prompt', acme, { topic: 'quarterly ledger' });
    expect(prompt.status, JSON.stringify(prompt.body)).toBe(200);
    expect(JSON.stringify(prompt.body)).toContain('Acme quarterly ledger');
    expect(JSON.stringify(prompt.body)).not.toContain('Globex');

    // Tool calls are recorded in the background, shortly after the answer.
    const toolStream = streamId('tool', toolStreamKey('related_titles'));
    let calls = await api.ledger.store.readStream(toolStream);
    for (let tries = 0; calls.length === 0 && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      calls = await api.ledger.store.readStream(toolStream);
    }
    const call = calls.at(-1);
    expect(call?.metadata.actor).toEqual({ subject: 'bob', tenant: 'globex', via: 'tools' });
    expect(call?.metadata.project).toBe('globex');
  });

  it("keeps an annotation session to its tenant: another tenant gets 404, as for a missing session, and appends nothing", async () => {
    const created = await http('POST', '/api/v1/annotations/sessions', acme, { config: { documentIds: [acmeDocument] } });
    expect(created.status).toBe(201);
    const { sessionId, chunkCount } = created.body as { sessionId: string; chunkCount: number };
    expect(chunkCount).toBeGreaterThan(0);
    const stream = annotationStream(sessionId);
    const [started] = await api.ledger.store.readStream(stream);
    expect(started?.metadata.actor).toEqual({ subject: 'alice', tenant: 'acme', via: 'rest' });
    expect(started?.metadata.project).toBe('acme');
    const before = (await api.ledger.store.readStream(stream)).length;

    const base = `/api/v1/annotations/sessions/${sessionId}`;
    const unknown = `/api/v1/annotations/sessions/${crypto.randomUUID()}`;
    for (const [method, suffix, body] of [
      ['GET', '/progress', undefined],
      ['GET', '/export', undefined],
      ['GET', '/history', undefined],
      ['GET', `/diff?from=${encodeURIComponent(new Date(0).toISOString())}`, undefined],
      ['POST', '/annotations', { chunkId: 'any', tags: ['stolen'] }],
      ['POST', '/annotations/batch', { annotations: [{ chunkId: 'any', tags: ['stolen'] }] }],
      ['POST', '/relations', { sourceChunkId: 'a', targetChunkId: 'b', relationType: 'references' }],
    ] as const) {
      const foreign = await http(method, `${base}${suffix}`, globex, body);
      const missing = await http(method, `${unknown}${suffix}`, globex, body);
      expect(foreign.status, `${method} ${suffix}`).toBe(404);
      expect(missing.status, `${method} ${suffix}`).toBe(404);
      expect(foreign.body).toEqual({ error: { code: 'not_found', message: `Session '${sessionId}' not found` } });
    }
    expect(await api.ledger.store.readStream(stream)).toHaveLength(before);
    expect((await http('GET', `${base}/progress`, acme)).status).toBe(200);
  });

  it("starts a session only from the caller's own documents", async () => {
    const stolen = await http('POST', '/api/v1/annotations/sessions', globex, { config: { documentIds: [acmeDocument] } });
    const unknown = await http('POST', '/api/v1/annotations/sessions', globex, { config: { documentIds: [crypto.randomUUID()] } });
    // Another tenant's document is as unknown as a missing one: no chunks to annotate.
    expect(stolen.status).toBe(400);
    expect(stolen).toEqual(unknown);
  });
});
