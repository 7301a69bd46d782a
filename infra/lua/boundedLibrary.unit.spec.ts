import { LuaFactory } from 'wasmoon';
import { describe, expect, it } from 'vitest';
import { runLua } from './luaRuntime.js';
import { BOUNDED_LIBRARY } from './boundedLibrary.js';

const host = { search: () => Promise.resolve(null), get: () => Promise.resolve(null), sources: () => Promise.resolve(null), log: () => undefined };
const limits = { timeoutMs: 20_000, memoryBytes: 64 << 20, instructionBudget: 1e10 };

const PAD = 'xxxxxx';

/** Calls of the pattern functions, as Lua expressions over `s`, whose results are packed in a list. */
const CALLS = [
  `{ s:find("a+b") }`, `{ s:find("(a+)(b)") }`, `{ s:find("a-b", 3000) }`, `{ s:find("^x*a") }`, `{ s:find("b$") }`,
  `{ s:find("%d+") }`, `{ s:find("[%a_][%w_]*") }`, `{ s:find("[^x]+") }`, `{ s:find("[a-c]+") }`, `{ s:find("[]]") }`,
  `{ s:find("()a*()") }`, `{ s:find("%f[%w]%w+") }`, `{ s:find("%b()") }`, `{ s:find("(%a)%1+") }`, `{ s:find("a?b+") }`,
  `{ s:find("%s*$") }`, `{ s:find(".-c") }`, `{ s:find("x*", -5) }`, `{ s:find("[%-%]]+") }`, `{ s:find("%u%l*") }`,
  `{ s:match("(%w+)=(%w+)") }`, `{ s:match("^(x*)(.-)%s*$") }`, `{ s:match("(a*(.)%w(%s*))") }`, `{ s:match("()%p+()") }`,
  `{ s:match("[%x]+", 3001) }`, `{ s:match("%c*%g+") }`, `{ s:match("(h)(e)(l)(l)(o)") }`,
  `{ s:gsub("%s+", " ") }`, `{ s:gsub("(%w+)=(%w+)", "%2=%1") }`, `{ s:gsub("a*", "-") }`, `{ s:gsub("%w+", { key = "K", aab = 1 }) }`,
  `{ s:gsub("(%w+)", function(w) if w == "value" then return "V" end end) }`, `{ s:gsub("x+", "%0%0", 1) }`, `{ s:gsub("^x+", "") }`,
  `{ s:gsub("()(b)", "%1") }`, `{ s:gsub("%%", "%%%%") }`, `{ s:gsub("", ".") }`,
  `(function() local t = {} for a, b in s:gmatch("(%w+)=(%w+)") do t[#t + 1] = a .. b end return t end)()`,
  `(function() local t = {} for w in s:gmatch("%a+") do t[#t + 1] = w end return t end)()`,
  `(function() local t = {} for p in s:gmatch("()a*") do t[#t + 1] = p end return t end)()`,
  `(function() local t = {} for w in s:gmatch("[^%s]+", 2995) do t[#t + 1] = w end return t end)()`,
  `{ pcall(string.find, s, "(a") }`, `{ pcall(string.find, s, "a)+") }`, `{ pcall(string.find, s, "[a+") }`, `{ pcall(string.gsub, s, "a+", "%9") }`,
];
const SUBJECTS = [`${PAD}aab key=value (x(y)z) 42 hello  \t`, `${PAD}]]--% Upper lower%ab ()`, PAD];

/** The expression on the plain C library (`ported` false), or with every pattern on the Lua matcher. */
const evaluate = async (subject: string, expression: string, ported: boolean) => {
  const engine = await new LuaFactory().createEngine();
  try {
    engine.global.set('s', subject);
    if (ported) {
      const port = BOUNDED_LIBRARY.replace(/NATIVE_STEPS = [\d.e]+/, 'NATIVE_STEPS = -1');
      expect(port).not.toBe(BOUNDED_LIBRARY);
      await engine.doString(`local type, error, tostring, memory_bytes = type, error, tostring, 1e8 ${port}`);
    }
    const value = (await engine.doString(`local r = ${expression} for i, v in ipairs(r) do if type(v) ~= "string" and type(v) ~= "number" and type(v) ~= "boolean" then r[i] = tostring(v) end end return r`)) as unknown;
    return JSON.parse(JSON.stringify(value ?? null)) as unknown;
  } finally {
    engine.global.close();
  }
};

describe('the bounded library functions', () => {
  it.each(SUBJECTS.flatMap((subject, i) => CALLS.map((call) => [i, call] as const)))('the Lua matcher answers as the C library does (subject %i): %s', async (i, call) => {
    const subject = SUBJECTS[i]!;
    const expected = await evaluate(subject, call, false);
    const actual = await evaluate(subject, call, true);
    // Error messages differ in where they point; that there is one, and what it says, must not.
    const strip = (v: unknown) => JSON.parse(JSON.stringify(v).replace(/"[^"]*:\d+: /g, '"')) as unknown;
    expect(strip(actual)).toEqual(strip(expected));
  });

  it('table.move refuses a range longer than the memory limit can hold, and moves a short one', async () => {
    const run = (body: string) => runLua({ source: `return { execute = function() ${body} end }`, chunkName: 'move.lua', kind: 'tool', entry: 'execute', input: {} }, host, { ...limits, timeoutMs: 2000 });
    await expect(run(`return table.move({}, 1, 1e15, 2)`)).rejects.toThrow(/table\.move: a range of .* elements is more than the memory limit can hold/);
    await expect(run(`return table.move({ 1, 2, 3 }, 1, 3, 2)`)).resolves.toEqual([1, 1, 2, 3]);
  });

  it('string.rep answers an empty result at once and refuses one over the memory limit', async () => {
    const run = (body: string) => runLua({ source: `return { execute = function() ${body} end }`, chunkName: 'rep.lua', kind: 'tool', entry: 'execute', input: {} }, host, { ...limits, timeoutMs: 2000 });
    await expect(run(`return #string.rep("", 1e15) + #(""):rep(1e15, "")`)).resolves.toBe(0);
    await expect(run(`return string.rep("ab", 3, ",")`)).resolves.toBe('ab,ab,ab');
    await expect(run(`return string.rep("x", 1e12)`)).rejects.toThrow(/string\.rep: the result would exceed the memory limit/);
  });
});
