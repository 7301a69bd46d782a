/* eslint-disable @typescript-eslint/no-unsafe-assignment -- vitest's asymmetric matchers are typed any */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type Ledger, type RunningServer } from '../../src/main.js';
import { openExtensionsLedger, toolsFolder } from './extensionsLedger.js';

const tool = (name: string, body: string, parameters = '{ type = "object" }') =>
  `return { name = "${name}", description = "${name}", parameters = ${parameters}, execute = function(params) ${body} end }`;

/** Calls that ran inside the Lua C library, out of reach of the instruction hook. */
const STUCK_IN_C = {
  find_backtracking: `return string.find(string.rep("a", 300000), ".-.-.-b")`,
  match_backtracking: `return string.match(string.rep("a", 300000), "(a*)*b") or "none"`,
  gsub_backtracking: `return (string.gsub(string.rep(" ", 300000) .. "x", "%s+$", ""))`,
  gmatch_backtracking: `local n = 0 for _ in string.gmatch(string.rep("a", 300000), "a-a-a-b") do n = n + 1 end return n`,
};

const tools = {
  'rep_empty.lua': tool('rep_empty', `return #string.rep("", 1e15) + #(""):rep(1e15, "")`),
  'rep_huge.lua': tool('rep_huge', `return #string.rep("ab", 1e15)`),
  ...Object.fromEntries(Object.entries(STUCK_IN_C).map(([name, body]) => [`${name}.lua`, tool(name, body)])),
  'depth.lua': tool('depth', `local d, v = 0, params.data while type(v) == "table" do d, v = d + 1, v[1] end return d`, '{ type = "object", properties = { data = { type = "array" } } }'),
  'patterns.lua': tool(
    'patterns',
    `local s = params.text return { (s:gsub("%s+", " ")), s:match("(%w+)=(%w+)"), select(2, s:gsub("%w+", "")), s:find("end", 1, true), s:rep(2, "|") }`,
    '{ type = "object", properties = { text = { type = "string" } }, required = { "text" } }',
  ),
};

/** `depth` arrays, each holding the next: written as text, as JSON.stringify would itself run out of stack. */
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('Lua tools bounded inside the C library', () => {
  let server: RunningServer;
  let ledger: Ledger;

  beforeAll(async () => {
    ledger = await openExtensionsLedger({ toolsDir: toolsFolder(tools), timeoutMs: 1500 });
    server = await startServer(ledger);
  });
  afterAll(async () => {
    await server?.close();
  });

  const post = (name: string, body: string) =>
    fetch(`${server.url}/tools/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it.each(Object.keys(STUCK_IN_C))('%s ends in a timeout or tool_error while /health keeps answering', async (name) => {
    let toolDone = false;
    const calling = post(name, '{}').then(async (response) => {
      toolDone = true;
      return { status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } };
    });
    const health = await fetch(`${server.url}/health`);
    const healthAnsweredFirst = !toolDone;
    const { status, body } = await calling;
    expect(health.status).toBe(200);
    expect(healthAnsweredFirst).toBe(true);
    expect([408, 500]).toContain(status);
    expect(body.error?.code).toBe(status === 408 ? 'timeout' : 'tool_error');
    expect(body.error?.message).toMatch(new RegExp(`/${name}\\.lua: `));
  });

  it('string.rep answers an empty result at once, and refuses one over the memory limit', async () => {
    const empty = await post('rep_empty', '{}');
    expect(await empty.json()).toEqual({ result: 0 });
    const huge = await post('rep_huge', '{}');
    expect(huge.status).toBe(500);
    expect(await huge.json()).toEqual({ error: { code: 'tool_error', message: expect.stringMatching(/rep_huge\.lua:1: string\.rep: the result would exceed the memory limit/) } });
  });

  it('keeps ordinary string work working', async () => {
    const response = await post('patterns', JSON.stringify({ text: 'a  b\tc key=value end' }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: ['a b c key=value end', 'key', 6, 18, 'a  b\tc key=value end|a  b\tc key=value end'] });
  });

  it('refuses arguments nested deeper than the limit with bad_request, and takes moderate nesting', async () => {
    const deep = await post('depth', `{"data":${nested(20_000)}}`);
    expect(deep.status).toBe(400);
    expect(await deep.json()).toEqual({ error: { code: 'bad_request', message: expect.stringMatching(/nested more than \d+ levels/) } });
    const shallow = await post('depth', `{"data":${nested(30)}}`);
    expect(await shallow.json()).toEqual({ result: 30 });
    expect(shallow.status).toBe(200);
  });
});
