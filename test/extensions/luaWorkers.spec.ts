/* eslint-disable @typescript-eslint/no-unsafe-assignment -- vitest's asymmetric matchers are typed any */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import type { ContextTools } from '../../src/ports/contextTools.js';
import { openExtensionsLedger, toolsFolder } from './extensionsLedger.js';

/**
 * Context queries that tell the test when a script has reached them: each tool below calls
 * `ctx.search` first, so the test knows the script runs before it sends anything else.
 */
const signallingContext = () => {
  const waiters: (() => void)[] = [];
  let reached = 0;
  const contextTools: ContextTools = {
    search: () => {
      reached++;
      waiters.splice(0).forEach((wake) => wake());
      return Promise.resolve({ results: [] });
    },
    get: () => Promise.resolve(null),
    sources: () => Promise.resolve({ sources: [] }),
  };
  /** Resolves once `count` scripts in all have called `ctx.search`. */
  const started = async (count: number) => {
    while (reached < count) await new Promise<void>((wake) => waiters.push(wake));
  };
  return { contextTools, started };
};

const looping = (name: string, body: string) =>
  `return { name = "${name}", description = "${name}", execute = function(params, ctx) ctx.search("start") ${body} end }`;

/** Loops the instruction hook could not yield from, as they run inside C functions or other coroutines. */
const LOOPS: Record<string, string> = {
  coroutine_loop: `local f = coroutine.wrap(function() while true do end end) f()`,
  sort_loop: `table.sort({ 3, 1, 2, 5, 4 }, function(a, b) while true do end end)`,
  gsub_loop: `string.gsub("abc", "%w", function(c) while true do end end)`,
  tostring_loop: `tostring(setmetatable({}, { __tostring = function() while true do end end }))`,
};

const tools = {
  ...Object.fromEntries(Object.entries(LOOPS).map(([name, body]) => [`${name}.lua`, looping(name, body)])),
  'spin.lua': looping('spin', 'while true do end'),
  'hog.lua': `return { name = "hog", description = "hog", execute = function() local t = {} for i = 1, 1e12 do t[i] = string.rep("x", 1048576) .. i end end }`,
};

type Answer = { status: number; code?: string; message?: string };

describe('Lua scripts in worker threads', () => {
  let server: RunningServer;
  const context = signallingContext();
  let calls = 0;

  beforeAll(async () => {
    const ledger = await openExtensionsLedger({ toolsDir: toolsFolder(tools), timeoutMs: 1500, maxConcurrent: 1, contextTools: context.contextTools });
    server = await startServer(ledger);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** Calls a tool over HTTP; `order` receives its label when the answer arrives. */
  const post = async (name: string, order: string[] = [], label = name): Promise<Answer> => {
    const response = await fetch(`${server.url}/tools/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const body = (await response.json()) as { error?: { code: string; message: string } };
    order.push(label);
    return { status: response.status, code: body.error?.code, message: body.error?.message };
  };

  const health = async (order: string[]) => {
    const response = await fetch(`${server.url}/health`);
    order.push('health');
    return response.status;
  };

  it.each(Object.keys(LOOPS))('%s: /health answers while the script loops, and the call ends in a timeout', async (name) => {
    const order: string[] = [];
    const calling = post(name, order);
    await context.started(++calls);
    expect(await health(order)).toBe(200);
    const answer = await calling;
    expect(order).toEqual(['health', name]);
    expect(answer).toEqual({ status: 408, code: 'timeout', message: expect.stringMatching(new RegExp(`${name}\\.lua: took longer than 1500 ms`)) });
  });

  it('runs one script at a time here: one more call waits for the slot, and the next is refused as busy on each surface', async () => {
    const client = new Client({ name: 'busy', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    try {
      const order: string[] = [];
      const running = post('spin', order, 'running');
      await context.started(++calls);
      // Two more at once: whichever the server reads first waits for the slot, the other is refused.
      const more = [post('spin', order, 'more 1'), post('spin', order, 'more 2')];
      const first = await Promise.race(more);
      expect(first).toEqual({ status: 503, code: 'unavailable', message: expect.stringMatching(/Lua scripts are busy/) });
      // The queue is still full: MCP refuses in its own format.
      const result = await client.callTool({ name: 'spin', arguments: {} });
      order.push('mcp');
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toMatch(/SERVICE_UNAVAILABLE.*Lua scripts are busy/);

      expect(await running).toMatchObject({ status: 408, code: 'timeout' });
      const answers = await Promise.all(more);
      calls++;
      expect(answers.map((a) => a.status).sort()).toEqual([408, 503]);
      // Both refusals came while the first call ran; the waiting call ran (and timed out) after it.
      const waited = answers[0]!.status === 408 ? 'more 1' : 'more 2';
      expect(order.slice(1)).toEqual(['mcp', 'running', waited]);
    } finally {
      await client.close();
    }
  });

  it('a call allocating past the memory cap ends with a clear error, and the server goes on serving', async () => {
    const answer = await post('hog');
    expect(answer).toEqual({ status: 500, code: 'tool_error', message: expect.stringMatching(/hog\.lua: exceeded its memory limit/) });
    expect(await health([])).toBe(200);
    const order: string[] = [];
    const after = post('spin', order);
    await context.started(++calls);
    expect(await after).toMatchObject({ status: 408, code: 'timeout' });
  });
});

describe('a Lua worker whose heap runs out', () => {
  let server: RunningServer;

  beforeAll(async () => {
    // Small in Lua, large once the host has decoded it: the worker's heap cap is reached before the Lua one.
    const bomb = `return { name = "json_bomb", description = "json_bomb", execute = function(params, ctx) return #ctx.json.decode("[" .. string.rep("1,", 1e6) .. "1]") end }`;
    const ledger = await openExtensionsLedger({ toolsDir: toolsFolder({ 'jsonBomb.lua': bomb }), timeoutMs: 30_000, memoryMb: 16 });
    server = await startServer(ledger);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('ends the call with a clear error, and the server goes on serving', async () => {
    const response = await fetch(`${server.url}/tools/json_bomb`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: { code: 'tool_error', message: expect.stringMatching(/jsonBomb\.lua: exceeded its memory limit/) } });
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const after = await fetch(`${server.url}/tools/word_count`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"still here"}' });
    expect(await after.json()).toEqual({ result: expect.objectContaining({ words: 2 }) });
  }, 60_000);
});
