import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeConnector } from '../../commands/connectors/changeConnector.js';
import type { Position } from '../../src/domain/position.js';
import { commandContext } from '../../src/engine/commands.js';
import { tempDataDir } from '../support/ledger.js';
import { JWT_SECRET, startApiServer, type ApiServer } from './apiServer.js';

// The server may read `inside` only; its configuration file and `outside` lie beyond it.
const base = tempDataDir('ctx-ingest-roots-');
const inside = path.join(base, 'inside');
const outside = path.join(base, 'outside');
mkdirSync(path.join(inside, 'docs'), { recursive: true });
mkdirSync(path.join(inside, 'repo'), { recursive: true });
mkdirSync(outside);
writeFileSync(path.join(inside, 'docs', 'guide.md'), '# Guide\n\nThe quartermaster keeps the ledger.\n');
writeFileSync(path.join(inside, 'repo', 'main.py'), 'def main():\n    return 0\n');
writeFileSync(path.join(outside, 'private.md'), 'outside-only-word\n');
symlinkSync(outside, path.join(inside, 'escape'));
const configFile = path.join(base, 'ctx.toml');
writeFileSync(configFile, `[auth]\nmode = "on"\njwt_secret = "${JWT_SECRET}"\n`);

/** Paths an `index:write` caller may not ingest, each with why. */
const FORBIDDEN: [string, string][] = [
  ['/etc/passwd', 'a system file'],
  ['../outside', 'a parent-directory path'],
  [outside, 'an absolute path outside the roots'],
  [path.join(inside, 'escape'), 'a link inside the roots that leads out'],
  [path.join(inside, 'escape', 'private.md'), 'a file reached through such a link'],
  [configFile, "the server's own configuration file"],
];

const connect = async (api: ApiServer, key: string) => {
  const client = new Client({ name: 'ingest-roots-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${api.server.url}/mcp`), { requestInit: { headers: { 'x-api-key': key } } }),
  );
  return client;
};

const errorOf = (result: unknown) => {
  const { isError, content } = result as { isError?: boolean; content: { text: string }[] };
  expect(isError).toBe(true);
  return (JSON.parse(content[0]!.text) as { error: { code: string; message: string; details?: Record<string, unknown> } }).error;
};

describe('what ingestion may read, and who may ingest', () => {
  let api: ApiServer;
  let reader: { key: string };
  let writer: { key: string };
  let readerMcp: Client;
  let writerMcp: Client;

  beforeAll(async () => {
    api = await startApiServer({ CTX_INGEST__ROOTS: inside }, configFile);
    reader = await api.apiKey(['search:read', 'index:read']);
    writer = await api.apiKey(['search:read', 'index:read', 'index:write']);
    readerMcp = await connect(api, reader.key);
    writerMcp = await connect(api, writer.key);
  });
  afterAll(async () => {
    await readerMcp.close();
    await writerMcp.close();
    await api.close();
  });

  const head = () => api.ledger.store.headPosition();
  /** Events appended since `from`, leaving out the record of tool calls made over `/tools`. */
  const appendedSince = async (from: Position) =>
    (await api.ledger.store.readAll({ from })).filter((e) => e.type !== 'ToolCalled').map((e) => e.type);
  const tools = async (name: string, key: string, body: unknown) => {
    const response = await fetch(`${api.server.url}/tools/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } };
  };

  describe('a key without index:write', () => {
    it.each([
      ['documents.ingest', { paths: [path.join(inside, 'docs')] }],
      ['documents.ingest_batch', { source: 'notes', documents: [{ source_id: 'a', body: 'text' }] }],
    ])('cannot call %s over MCP', async (name, args) => {
      const before = await head();
      const error = errorOf(await readerMcp.callTool({ name, arguments: args }));
      expect(error).toMatchObject({ code: 'AUTHORIZATION_ERROR', message: "This action needs the 'index:write' scope" });
      expect(await head()).toEqual(before);
    });

    it.each([
      ['documents.ingest', { paths: [path.join(inside, 'docs')] }],
      ['documents.ingest_batch', { source: 'notes', documents: [{ source_id: 'a', body: 'text' }] }],
    ])('cannot call /tools/%s (403)', async (name, body) => {
      const before = await head();
      const response = await tools(name, reader.key, body);
      expect(response).toEqual({
        status: 403,
        body: { error: { code: 'forbidden', message: "This action needs the 'index:write' scope" } },
      });
      expect(await head()).toEqual(before);
    });
  });

  describe('a key with index:write', () => {
    it.each(FORBIDDEN)('cannot ingest %s (%s) over MCP, and nothing is appended', async (given) => {
      const before = await head();
      const error = errorOf(await writerMcp.callTool({ name: 'documents.ingest', arguments: { paths: [given] } }));
      expect(error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'paths', setting: 'ingest.roots' } });
      expect(error.message).toContain('ingest.roots');
      expect(await head()).toEqual(before);
    });

    it.each(FORBIDDEN)('cannot ingest %s (%s) through /tools/documents.ingest (400)', async (given) => {
      const before = await head();
      const response = await tools('documents.ingest', writer.key, { paths: [given] });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'bad_request', message: expect.stringContaining('ingest.roots') as unknown });
      expect(await appendedSince(before)).toEqual([]);
    });

    it('ingests nothing when one of several paths is outside the roots', async () => {
      const before = await head();
      const error = errorOf(
        await writerMcp.callTool({ name: 'documents.ingest', arguments: { paths: [path.join(inside, 'docs'), '/etc/passwd'] } }),
      );
      expect(error.message).toContain('/etc/passwd');
      expect(await head()).toEqual(before);
    });

    it('never stores a file outside the roots while a file in them is swapped with a link to it during ingestion', async () => {
      const race = path.join(inside, 'race');
      mkdirSync(race);
      writeFileSync(path.join(race, 'f.md'), 'the racing quokka\n');
      // Another process swaps race/f.md between a regular file and a link out, by atomic renames.
      const swapper = spawn(process.execPath, [
        '-e',
        `const fs = require('node:fs');
         const [spare, file, target] = process.argv.slice(1);
         fs.writeFileSync(spare + '/race.md', 'the racing quokka\\n');
         process.stdout.write('swapping');
         for (;;) {
           fs.linkSync(spare + '/race.md', spare + '/f.next'); fs.renameSync(spare + '/f.next', file);
           fs.symlinkSync(target, spare + '/l.next'); fs.renameSync(spare + '/l.next', file);
         }`,
        base,
        path.join(race, 'f.md'),
        path.join(outside, 'private.md'),
      ]);
      await new Promise((resolve) => swapper.stdout.once('data', resolve));
      try {
        // A later round may store the file's own text again: each round is searched.
        for (let round = 0; round < 60; round++) {
          const ingested = await tools('documents.ingest', writer.key, { paths: [race] });
          expect(ingested.status).toBe(200);
          const found = await tools('search', writer.key, { query: 'outside-only-word' });
          expect(found.body).toMatchObject({ results: [] });
        }
      } finally {
        swapper.kill('SIGKILL');
      }
    });

    it('never shows what lies outside the roots to search', async () => {
      const response = await tools('search', writer.key, { query: 'outside-only-word' });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ results: [] });
    });

    it('ingests a folder inside the roots, over MCP and /tools', async () => {
      const overMcp = await writerMcp.callTool({ name: 'documents.ingest', arguments: { paths: [path.join(inside, 'docs')] } });
      expect(overMcp.isError).toBeFalsy();
      expect(overMcp.structuredContent).toMatchObject({ scanned: 1, created: 1, failed: 0 });
      const overTools = await tools('documents.ingest', writer.key, { paths: [path.join(inside, 'docs', 'guide.md')] });
      expect(overTools).toMatchObject({ status: 200, body: { result: { scanned: 1, unchanged: 1 } } });
    });

    it.each([
      [outside, 'an absolute path outside the roots'],
      [path.join(inside, 'escape'), 'a link inside the roots that leads out'],
      ['/etc', 'a system folder'],
    ])('cannot start indexing %s (%s)', async (given) => {
      const before = await head();
      const error = errorOf(await writerMcp.callTool({ name: 'start_indexing_background', arguments: { repo_path: given } }));
      expect(error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { field: 'repo_path', value: given, setting: 'ingest.roots' },
      });
      expect(await head()).toEqual(before);
    });

    it('cannot start indexing a connector whose folder lies outside the roots (REST, 400)', async () => {
      // A connector recorded while the roots still held its folder.
      await changeConnector(
        api.ledger.store,
        { kind: 'add', connectorId: crypto.randomUUID(), name: 'old', type: 'filesystem', settings: { root: outside } },
        commandContext({ subject: 'admin', tenant: 'acme', via: 'rest' }, { project: 'acme' }),
      );
      await api.ledger.projections.waitFor(await head(), { timeoutMs: 10_000 });
      const before = await head();
      const response = await api.call('POST', '/index/start', { apiKey: writer.key, body: { connectors: ['old'] } });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        error: {
          code: 'VALIDATION_ERROR',
          detail: expect.stringContaining('ingest.roots') as unknown,
          correlation_id: expect.any(String) as unknown,
        },
      });
      expect(await head()).toEqual(before);
    });

    it('cannot add a connector whose folder lies outside the roots', async () => {
      const { key } = await api.apiKey(['connectors:read', 'connectors:write']);
      const response = await api.call('POST', '/connectors', {
        apiKey: key,
        body: { type: 'filesystem', name: 'escape', config: { root: 'escape' } },
      });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    });

    it('starts indexing a repository inside the roots', async () => {
      const result = await writerMcp.callTool({
        name: 'start_indexing_background',
        arguments: { repo_path: path.join(inside, 'repo') },
      });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ status: expect.stringMatching(/pending|running/) as unknown });
    });
  });
});
