import { LuaFactory, LuaLibraries, type LuaEngine } from 'wasmoon';
import { LUA_DRIVER } from './luaDriver.js';
import { BadRequestError, ToolError, ToolTimeoutError } from './luaErrors.js';
import { MAX_ARGUMENT_DEPTH, nestedDeeperThan } from './toolParameters.js';

/** What a script may ask of the host; every function is read-only. */
export interface LuaHost {
  search(query: unknown, options: Record<string, unknown>): Promise<unknown>;
  get(id: unknown): Promise<unknown>;
  sources(): Promise<unknown>;
  log(line: string): void;
  /** Present only when a deployment allow-lists hosts. */
  httpGet?: (url: unknown, options: Record<string, unknown>) => Promise<unknown>;
}

export interface LuaLimits {
  timeoutMs: number;
  memoryBytes: number;
  /** Lua VM instructions one call may execute. */
  instructionBudget: number;
}

export type ScriptKind = 'tool' | 'agent' | 'connector';

export interface LuaJob {
  source: string;
  /** Shown in error messages, e.g. `tools/wordCount.lua`. */
  chunkName: string;
  kind: ScriptKind;
  /** The function of the script's table to call with `(input, ctx)`; without one, the table's data fields. */
  entry?: string;
  input?: unknown;
}

/** The data fields of a script's table and the names of its functions. */
export interface LuaDeclaration {
  fields: Record<string, unknown>;
  functions: string[];
}

const HOOK_EVERY_INSTRUCTIONS = 1000;
/** How long a script may hold the event loop before the hook yields to other work. */
const SLICE_MS = 10;
const COUNT_MASK = 8;
const STANDARD_LIBRARIES = [LuaLibraries.Base, LuaLibraries.Coroutine, LuaLibraries.Table, LuaLibraries.String, LuaLibraries.Math];

let factory: LuaFactory | undefined;
const luaFactory = () => (factory ??= new LuaFactory());

/** Compiles the Lua module ahead of the first script (a worker does it before it says it is ready). */
export const loadLuaModule = async (): Promise<void> => {
  await luaFactory().getLuaModule();
};

/** The Lua module's memory: it grows with the largest state run so far and never shrinks. */
export const luaModuleBytes = async (): Promise<number> => (await luaFactory().getLuaModule()).module.HEAPU8.byteLength;

type Outcome = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * A JSON value as the driver's `from_host` rebuilds it in Lua: a scalar as is (null as nil, as Lua
 * JSON libraries do), a table as one flat list of cells, `count, (key, isTable, value) × count`
 * per table, tables numbered in the order they are listed. Handing wasmoon nested tables instead
 * overruns the Lua stack a few levels down and corrupts the module's memory.
 */
const flattened = (value: unknown): unknown => {
  if (value === null || typeof value !== 'object') return value ?? undefined;
  const cells: unknown[] = [];
  const tables: object[] = [value];
  for (let index = 0; index < tables.length; index++) {
    const table = tables[index]!;
    const entries: [string | number, unknown][] = Array.isArray(table) ? table.map((item, i) => [i + 1, item]) : Object.entries(table);
    const present = entries.filter(([, item]) => item !== null && item !== undefined);
    cells.push(present.length);
    for (const [key, item] of present) {
      if (typeof item === 'object') cells.push(key, true, tables.push(item as object));
      else cells.push(key, false, item);
    }
  }
  return cells;
};

const settle = async (work: () => Promise<unknown>): Promise<Outcome> => {
  try {
    return { ok: true, value: flattened(await work()) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
};

const decodeJson = (text: unknown): Outcome => {
  if (typeof text !== 'string') return { ok: false, error: 'json.decode expects a string' };
  try {
    return { ok: true, value: flattened(JSON.parse(text)) };
  } catch (error) {
    return { ok: false, error: `invalid JSON: ${(error as Error).message}` };
  }
};

const encodeJson = (value: unknown): Outcome => ({ ok: true, value: JSON.stringify(value ?? null) });

/**
 * Runs one script in a fresh Lua state (Lua 5.4 on wasmoon) with only the safe standard libraries,
 * in the calling thread: the server calls it inside a worker of the pool (luaPool.ts), which can
 * stop the thread whatever the script does. An instruction-count hook enforces the wall-clock
 * timeout and the instruction budget, and yields to the thread's event loop every few milliseconds
 * (host answers arrive there); once a limit is hit the hook raises on every instruction, so `pcall`
 * cannot swallow it.
 */
export const runLua = async (job: LuaJob, host: LuaHost, limits: LuaLimits): Promise<unknown> => {
  if (job.source.startsWith('\x1b')) throw new ToolError(`${job.chunkName}: precompiled Lua chunks are not accepted`);
  if (nestedDeeperThan(job.input, MAX_ARGUMENT_DEPTH)) {
    throw new BadRequestError(`${job.chunkName}: arguments are nested more than ${MAX_ARGUMENT_DEPTH} levels deep`);
  }
  const lua = await luaFactory().getLuaModule();
  const engine: LuaEngine = await luaFactory().createEngine({
    openStandardLibs: false,
    injectObjects: false,
    enableProxy: false,
    traceAllocations: true,
  });
  const deadline = Date.now() + limits.timeoutMs;
  let aborted = null as string | null;
  let instructions = 0;
  let sliceStart = Date.now();
  let driverThread = 0;
  let hook = 0;
  let timer: NodeJS.Timeout | undefined;

  const abort = (reason: string, L: number) => {
    aborted ??= reason;
    lua.lua_sethook(L, hook, COUNT_MASK, 1);
    if (L !== driverThread) lua.lua_sethook(driverThread, hook, COUNT_MASK, 1);
  };
  hook = lua.module.addFunction((L: number) => {
    instructions += HOOK_EVERY_INSTRUCTIONS;
    const now = Date.now();
    if (aborted === null && now > deadline) abort(`took longer than ${limits.timeoutMs} ms`, L);
    if (aborted === null && instructions > limits.instructionBudget) {
      abort(`exceeded its budget of ${limits.instructionBudget} instructions`, L);
    }
    if (aborted !== null) {
      lua.lua_pushstring(L, `${job.chunkName}: ${aborted}`);
      lua.lua_error(L);
      return;
    }
    if (now - sliceStart >= SLICE_MS && L === driverThread && lua.lua_isyieldable(L)) {
      sliceStart = now;
      lua.lua_yield(L, 0);
    }
  }, 'vii');

  // Host calls race the deadline: a script waiting on the host still stops on time.
  const deadlinePassed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      if (driverThread) abort(`took longer than ${limits.timeoutMs} ms`, driverThread);
      reject(new Error('timeout'));
    }, limits.timeoutMs);
  });
  deadlinePassed.catch(() => undefined);
  const hostCall = (work: () => Promise<unknown>) =>
    settle(() => Promise.race([work(), deadlinePassed])).then((outcome) => {
      sliceStart = Date.now();
      return outcome;
    });

  try {
    engine.global.setMemoryMax(limits.memoryBytes);
    for (const library of STANDARD_LIBRARIES) engine.global.loadLibrary(library);
    const hostFunctions: Record<string, unknown> = {
      search: (query: unknown, options: Record<string, unknown>) => hostCall(() => host.search(query, options)),
      get: (id: unknown) => hostCall(() => host.get(id)),
      sources: () => hostCall(() => host.sources()),
      json_encode: encodeJson,
      json_decode: decodeJson,
      log: (line: unknown) => host.log(String(line)),
    };
    const httpGet = host.httpGet;
    if (httpGet) hostFunctions.http_get = (url: unknown, options: Record<string, unknown>) => hostCall(() => httpGet(url, options));
    engine.global.set('__host', hostFunctions);
    engine.global.set('__job', {
      source: job.source,
      chunkname: `@${job.chunkName}`,
      kind: job.kind,
      entry: job.entry,
      input: flattened(job.input),
      memory_bytes: limits.memoryBytes,
    });

    const thread = engine.global.newThread();
    driverThread = thread.address;
    thread.loadString(LUA_DRIVER, '=driver');
    lua.lua_sethook(driverThread, hook, COUNT_MASK, HOOK_EVERY_INSTRUCTIONS);
    let returned: unknown;
    try {
      [returned] = await thread.run(0);
    } catch (error) {
      throw aborted !== null ? new ToolTimeoutError(`${job.chunkName}: ${aborted}`) : asToolError(job, error);
    }
    if (aborted !== null) throw new ToolTimeoutError(`${job.chunkName}: ${aborted}`);
    const outcome = returned as { ok: boolean; result?: { value?: unknown } & LuaDeclaration; error?: string };
    if (!outcome.ok) throw asToolError(job, outcome.error);
    if (job.entry === undefined) return { fields: outcome.result?.fields ?? {}, functions: outcome.result?.functions ?? [] };
    return outcome.result?.value ?? null;
  } finally {
    clearTimeout(timer);
    engine.global.close();
    lua.module.removeFunction(hook);
  }
};

const asToolError = (job: LuaJob, error: unknown): ToolError => {
  const raw = error instanceof Error ? error.message : String(error);
  const message = /not enough memory/.test(raw)
    ? `${job.chunkName}: exceeded its memory limit`
    : raw.split('\nstack traceback:')[0]!;
  return new ToolError(message);
};
