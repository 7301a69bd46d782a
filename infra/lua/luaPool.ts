import type { Worker } from 'node:worker_threads';
import type { AppError } from '../../src/errors.js';
import { spawn } from '../workers/workerRpc.js';
import { BadRequestError, LuaBusyError, ToolError, ToolTimeoutError } from './luaErrors.js';
import type { LuaHost, LuaJob, LuaLimits } from './luaRuntime.js';
import type { FromWorker, HostFunction, ToWorker } from './luaWorker.js';

/** Runs Lua scripts within the deployment's limits. */
export interface LuaRunner {
  readonly limits: LuaLimits;
  run(job: LuaJob, host: LuaHost): Promise<unknown>;
  close(): Promise<void>;
}

export interface LuaPoolOptions {
  limits: LuaLimits;
  /** Scripts running at once; as many more calls may wait for a slot. */
  maxConcurrent: number;
}

/** How long past the timeout a worker may take to report it before it is stopped. */
const GRACE_MS = 500;
/** An idle worker is released after this long. */
const IDLE_MS = 60_000;
/** A worker whose Lua memory grew past this (a script used much of its `memory_mb`) is not kept: the memory goes with it. */
const KEEP_MODULE_BYTES = 32 * 2 ** 20;
/** The worker's own JavaScript (and, from source, the TypeScript loader) beside what scripts hand over. */
const HEAP_BASE_MB = 64;

const errorFromWorker = ({ name, message }: { name: string; message: string }): AppError => {
  if (name === 'ToolTimeoutError') return new ToolTimeoutError(message);
  if (name === 'BadRequestError') return new BadRequestError(message);
  return new ToolError(message);
};

const answer = (host: LuaHost, name: HostFunction, args: unknown[]): Promise<unknown> => {
  switch (name) {
    case 'search':
      return host.search(args[0], (args[1] ?? {}) as Record<string, unknown>);
    case 'get':
      return host.get(args[0]);
    case 'sources':
      return host.sources();
    case 'httpGet':
      return host.httpGet ? host.httpGet(args[0], (args[1] ?? {}) as Record<string, unknown>) : Promise.reject(new Error('http.get is not available'));
  }
};

/**
 * Runs each script in a worker thread, so that no script holds the server's event loop, whatever
 * it loops in (a coroutine, a sort comparator, a `gsub` function, a metamethod). A worker that
 * does not answer by the timeout is terminated; its heap is capped; at most `maxConcurrent`
 * scripts run at once. Host calls (`ctx.search`, …) are answered here, in the main thread.
 */
export const createLuaPool = ({ limits, maxConcurrent }: LuaPoolOptions): LuaRunner => {
  const idle: { worker: Worker; timer: NodeJS.Timeout }[] = [];
  const workers = new Set<Worker>();
  // As many calls wait as run: each running one ends within the timeout, so none waits longer.
  const waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];
  let running = 0;
  let closed = false;

  const startWorker = (): Promise<Worker> =>
    new Promise((resolve, reject) => {
      const worker = spawn(new URL('./luaWorker', import.meta.url), null, {
        resourceLimits: { maxOldGenerationSizeMb: HEAP_BASE_MB + 2 * Math.ceil(limits.memoryBytes / 2 ** 20) },
      });
      workers.add(worker);
      // A worker's failure reaches its call's listeners; an idle one's is only forgotten.
      worker.on('error', () => undefined);
      worker.on('exit', (code) => {
        workers.delete(worker);
        const at = idle.findIndex((entry) => entry.worker === worker);
        if (at >= 0) clearTimeout(idle.splice(at, 1)[0]!.timer);
        reject(new ToolError(`The Lua worker could not start (exit code ${code})`));
      });
      worker.once('message', (message: FromWorker) => (message.type === 'ready' ? resolve(worker) : undefined));
    });

  const takeSlot = async (): Promise<void> => {
    if (closed) throw new ToolError('The server is shutting down');
    if (running < maxConcurrent) {
      running++;
      return;
    }
    if (waiting.length >= maxConcurrent) throw new LuaBusyError(maxConcurrent);
    await new Promise<void>((resolve, reject) => waiting.push({ resolve, reject }));
  };

  // A freed slot passes to the first waiting call, if any.
  const freeSlot = () => {
    const next = waiting.shift();
    if (next) next.resolve();
    else running--;
  };

  const takeWorker = async (): Promise<Worker> => {
    const entry = idle.pop();
    if (!entry) return startWorker();
    clearTimeout(entry.timer);
    entry.worker.ref();
    return entry.worker;
  };

  const putBack = (worker: Worker) => {
    if (closed || !workers.has(worker)) return void worker.terminate();
    worker.unref();
    const entry = {
      worker,
      // Out of the idle list first, so that no call takes a worker on its way out.
      timer: setTimeout(() => {
        idle.splice(idle.indexOf(entry), 1);
        void worker.terminate();
      }, IDLE_MS).unref(),
    };
    idle.push(entry);
  };

  const exec = (worker: Worker, job: LuaJob, host: LuaHost) =>
    new Promise<unknown>((resolve, reject) => {
      const finish = (outcome: { value: unknown } | { error: Error }, reuse: boolean) => {
        clearTimeout(hardStop);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (reuse) putBack(worker);
        else void worker.terminate();
        if ('error' in outcome) reject(outcome.error);
        else resolve(outcome.value);
      };
      const onMessage = (message: FromWorker) => {
        if (message.type === 'log') return host.log(message.line);
        if (message.type === 'host') {
          const { id, name, args } = message;
          const reply = (outcome: Extract<ToWorker, { type: 'host' }>['outcome']) => {
            if (workers.has(worker)) worker.postMessage({ type: 'host', id, outcome } satisfies ToWorker);
          };
          Promise.resolve()
            .then(() => answer(host, name, args))
            .then(
              (value) => reply({ ok: true, value }),
              (error: unknown) => reply({ ok: false, error: error instanceof Error ? error.message : String(error) }),
            );
          return;
        }
        if (message.type === 'done') {
          finish(message.ok ? { value: message.value } : { error: errorFromWorker(message.error) }, message.moduleBytes <= KEEP_MODULE_BYTES);
        }
      };
      const onError = (error: Error & { code?: string }) =>
        finish(
          {
            error:
              error.code === 'ERR_WORKER_OUT_OF_MEMORY'
                ? new ToolError(`${job.chunkName}: exceeded its memory limit`)
                : new ToolError(`${job.chunkName}: ${error.message}`),
          },
          false,
        );
      const onExit = () => finish({ error: new ToolError(`${job.chunkName}: the Lua worker stopped`) }, false);
      // The script's own hook reports the timeout; this stops a worker that cannot.
      const hardStop = setTimeout(
        () => finish({ error: new ToolTimeoutError(`${job.chunkName}: took longer than ${limits.timeoutMs} ms`) }, false),
        limits.timeoutMs + GRACE_MS,
      );
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ type: 'run', job, limits, httpGet: host.httpGet !== undefined } satisfies ToWorker);
    });

  return {
    limits,
    run: async (job, host) => {
      await takeSlot();
      try {
        return await exec(await takeWorker(), job, host);
      } finally {
        freeSlot();
      }
    },
    close: async () => {
      closed = true;
      for (const entry of waiting.splice(0)) entry.reject(new ToolError('The server is shutting down'));
      for (const entry of idle.splice(0)) clearTimeout(entry.timer);
      await Promise.all([...workers].map((worker) => worker.terminate()));
    },
  };
};
