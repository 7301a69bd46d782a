import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { loadLuaModule, luaModuleBytes, runLua, type LuaHost, type LuaJob, type LuaLimits } from './luaRuntime.js';

/** What the pool asks of a Lua worker: one run at a time, or the answer to one of its host calls. */
export type ToWorker =
  | { type: 'run'; job: LuaJob; limits: LuaLimits; httpGet: boolean }
  | { type: 'host'; id: number; outcome: { ok: true; value: unknown } | { ok: false; error: string } };

export type HostFunction = 'search' | 'get' | 'sources' | 'httpGet';

/** What a Lua worker tells the pool. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'host'; id: number; name: HostFunction; args: unknown[] }
  | { type: 'log'; line: string }
  | ({ type: 'done'; moduleBytes: number } & ({ ok: true; value: unknown } | { ok: false; error: { name: string; message: string } }));

/**
 * A worker thread that runs Lua scripts for the pool (luaPool.ts). Host functions (`ctx.search`,
 * `ctx.get`, …) are answered by the main thread, with the caller's identity, over messages.
 */
const port = parentPort!;
const send = (message: FromWorker) => port.postMessage(message);
const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
let nextId = 0;

const ask = (name: HostFunction, ...args: unknown[]) =>
  new Promise<unknown>((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    send({ type: 'host', id, name, args });
  });

const hostOf = (httpGet: boolean): LuaHost => ({
  search: (query, options) => ask('search', query, options),
  get: (id) => ask('get', id),
  sources: () => ask('sources'),
  log: (line) => send({ type: 'log', line }),
  ...(httpGet ? { httpGet: (url: unknown, options: Record<string, unknown>) => ask('httpGet', url, options) } : {}),
});

port.on('message', (message: ToWorker) => {
  if (message.type === 'host') {
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (message.outcome.ok) waiting?.resolve(message.outcome.value);
    else waiting?.reject(new Error(message.outcome.error));
    return;
  }
  void runLua(message.job, hostOf(message.httpGet), message.limits)
    .then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error: { name: (error as Error).name, message: (error as Error).message } }),
    )
    .then(async (outcome) => send({ type: 'done', moduleBytes: await luaModuleBytes(), ...outcome }));
});

// Scripts yield the cores to the thread answering requests (on Linux this sets the calling thread's priority).
try {
  setPriority(0, 10);
} catch {
  // Not permitted here: scripts run at the usual priority.
}
await loadLuaModule();
send({ type: 'ready' });
