/* eslint-disable @typescript-eslint/no-unsafe-assignment -- vitest's asymmetric matchers are typed any */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamId } from '../../src/domain/events.js';
import type { ExtensionsParts } from '../../src/modules/extensionsModule.js';
import { startServer, type Ledger, type RunningServer } from '../../src/main.js';
import { fixedContext, openExtensionsLedger, toolsFolder, writeScript } from './extensionsLedger.js';

const ESCAPES: Record<string, string> = {
  os_execute: `os.execute("touch /tmp/ctx-escaped")`,
  io_open: `io.open("/etc/passwd"):read("a")`,
  require_os: `require("os")`,
  dofile: `dofile("/etc/passwd")`,
  loadfile: `loadfile("/etc/passwd")`,
  debug_lib: `debug.getregistry()`,
  package_loadlib: `package.loadlib("libc.so.6", "system")`,
  bytecode: `assert(load("\\27LuaT\\0", "x", "b"))()`,
  string_dump: `string.dump(function() end)`,
  gc_finalizer: `setmetatable({}, { __gc = function() end })`,
};

const escapeTool = (name: string, body: string) =>
  `return { name = "${name}", description = "tries to escape", parameters = { type = "object" }, execute = function(params, ctx) return ${body.startsWith('assert') ? body : `(${body})`} end }`;

const tools = {
  'spin.lua': `return { name = "spin", description = "loops forever", execute = function() while true do end end }`,
  'pcallSpin.lua': `return { name = "pcall_spin", description = "loops inside pcall", execute = function() while true do pcall(function() while true do end end) end end }`,
  'hog.lua': `return { name = "hog", description = "allocates without bound", execute = function() local t = {} for i = 1, 1e12 do t[i] = string.rep("x", 4096) .. i end end }`,
  'fails.lua': `return {\n  name = "fails",\n  description = "raises",\n  execute = function(params)\n    error("no luck with " .. params.what)\n  end,\n  parameters = { type = "object", properties = { what = { type = "string" } }, required = { "what" } },\n}`,
  'broken.lua': `return { name = "broken", description = "syntax error", execute = function() return ( end }`,
  'noExecute.lua': `return { name = "no_execute", description = "declares no execute" }`,
  'clash.lua': `return { name = "echo", description = "takes a built-in's name", execute = function() return 1 end }`,
  ...Object.fromEntries(Object.entries(ESCAPES).map(([name, body]) => [`escape_${name}.lua`, escapeTool(`escape_${name}`, body)])),
};

describe('Lua tools over HTTP', () => {
  let server: RunningServer;
  let ledger: Ledger;
  let toolsDir: string;

  beforeAll(async () => {
    toolsDir = toolsFolder(tools);
    ledger = await openExtensionsLedger({
      toolsDir,
      contextTools: fixedContext([
        { id: 'd1', title: 'Payments runbook', source: 'docs', body: 'How to restart the payments API' },
        { id: 'd2', title: 'Search design', source: 'docs', body: 'BM25 and vectors' },
        { id: 'd3', title: 'Payments changelog', source: 'git', body: 'payments retries' },
      ]),
    });
    server = await startServer(ledger);
  });
  afterAll(async () => {
    await server?.close();
  });

  const call = (name: string, body: unknown) => server.app.inject({ method: 'POST', url: `/tools/${name}`, payload: body as object });

  it('lists built-in and Lua tools with their parameters', async () => {
    const response = await server.app.inject({ method: 'GET', url: '/tools/list' });
    expect(response.statusCode).toBe(200);
    const { tools: listed } = response.json<{ tools: { name: string; builtin: boolean; description: string; parameters: Record<string, unknown> }[] }>();
    const byName = new Map(listed.map((t) => [t.name, t]));
    expect(byName.get('echo')).toMatchObject({ builtin: true, parameters: { type: 'object', properties: { say: { type: 'string' } }, required: ['say'] } });
    expect(byName.get('word_count')).toMatchObject({
      builtin: false,
      description: 'Count the words, lines and characters in a piece of text',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    });
    expect(byName.get('related_titles')?.builtin).toBe(false);
  });

  it('skips malformed tool files, and a Lua tool cannot take a built-in name', async () => {
    const names = (await server.app.inject({ method: 'GET', url: '/tools/list' })).json<{ tools: { name: string; builtin: boolean }[] }>().tools;
    expect(names.map((t) => t.name)).not.toContain('broken');
    expect(names.map((t) => t.name)).not.toContain('no_execute');
    expect(names.filter((t) => t.name === 'echo')).toEqual([expect.objectContaining({ builtin: true })]);
  });

  it('runs a pure Lua tool with its declared defaults', async () => {
    const response = await call('word_count', { text: 'the cat and the hat\nthe end' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      result: { words: 7, lines: 2, characters: 27, top: [{ word: 'the', count: 3 }, { word: 'and', count: 1 }, { word: 'cat', count: 1 }] },
    });
  });

  it('gives scripts ctx.search', async () => {
    const response = await call('related_titles', { topic: 'payments', limit: 5, source: 'docs' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ result: { topic: 'payments', titles: [{ id: 'd1', title: 'Payments runbook' }] } });
  });

  it('dispatches other built-in tools by name', async () => {
    const response = await call('echo', { say: 'hi' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ result: { said: 'hi' } });
  });

  it('answers a missing or mistyped parameter with 400 bad_request', async () => {
    const missing = await call('word_count', {});
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: { code: 'bad_request', message: expect.stringMatching(/text/) } });
    const mistyped = await call('word_count', { text: 'a', top: 'many' });
    expect(mistyped.statusCode).toBe(400);
    expect((await call('echo', {})).json()).toMatchObject({ error: { code: 'bad_request' } });
  });

  it('answers an unknown tool with 404 not_found', async () => {
    const response = await call('no_such_tool', {});
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it("surfaces a script's error as tool_error with the file and line", async () => {
    const response = await call('fails', { what: 'lua' });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ error: { code: 'tool_error', message: expect.stringMatching(/fails\.lua:5: no luck with lua$/) } });
  });

  it('stops an infinite loop with 408 timeout while the server keeps answering', async () => {
    const started = Date.now();
    const looping = fetch(`${server.url}/tools/spin`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
    const response = await looping;
    expect(response.status).toBe(408);
    expect(await response.json()).toMatchObject({ error: { code: 'timeout', message: expect.stringMatching(/spin\.lua: took longer than 1500 ms/) } });
  });

  it('cannot be kept alive by catching the timeout with pcall', async () => {
    const response = await call('pcall_spin', {});
    expect(response.statusCode).toBe(408);
  });

  it('stops unbounded allocation at the memory cap with tool_error', async () => {
    const response = await call('hog', {});
    expect(response.statusCode).toBe(500);
    expect(response.json()).toMatchObject({ error: { code: 'tool_error', message: expect.stringMatching(/memory/) } });
    expect((await call('word_count', { text: 'still fine' })).statusCode).toBe(200);
  });

  it.each(Object.keys(ESCAPES))('refuses the sandbox escape %s', async (name) => {
    const response = await call(`escape_${name}`, {});
    expect(response.statusCode).toBe(500);
    expect(response.json()).toMatchObject({ error: { code: 'tool_error', message: expect.stringMatching(/escape_.*\.lua/) } });
    expect(existsSync('/tmp/ctx-escaped')).toBe(false);
  });

  it('records every call: tool, caller, parameters hash, duration and outcome', async () => {
    await call('word_count', { text: 'audit me' });
    await (ledger.parts.find((p) => 'tools' in p) as ExtensionsParts).tools.flush();
    const calls = await ledger.store.readStream(streamId('tool', 'word_count'));
    const outcomes = calls.map((e) => (e.type === 'ToolCalled' ? e.data.outcome : null));
    expect(outcomes).toContain('ok');
    expect(outcomes).toContain('bad_request');
    const last = calls.at(-1)!;
    expect(last.type === 'ToolCalled' && last.data).toMatchObject({
      tool: 'word_count',
      builtin: false,
      caller: 'tools:anonymous',
      paramsHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      outcome: 'ok',
    });
  });

  it('loads a tool dropped into the folder while running', async () => {
    writeScript(toolsDir, 'late.lua', `return { name = "late", description = "arrived late", execute = function() return "here" end }`);
    let response = await call('late', {});
    for (let i = 0; i < 50 && response.statusCode === 404; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      response = await call('late', {});
    }
    expect(response.json()).toEqual({ result: 'here' });
  });
});
