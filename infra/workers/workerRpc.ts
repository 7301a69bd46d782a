import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { parentPort, Worker, workerData, type WorkerOptions } from 'node:worker_threads';
import { UnavailableError, ValidationError } from '../../src/errors.js';

type RpcError = { name: string; message: string };
type Reply<Res> =
  | { type: 'ready'; info: unknown }
  | { type: 'failed'; error: RpcError }
  | { type: 'result'; id: number; result: Res }
  | { type: 'error'; id: number; error: RpcError };

/** Errors cross the thread as the ports promise them: bad input is a ValidationError, the rest UnavailableError. */
const rethrown = ({ name, message }: RpcError): Error =>
  name === 'ValidationError' ? new ValidationError(message) : new UnavailableError(message);
const errorOf = (error: unknown): RpcError => ({ name: (error as Error).name, message: (error as Error).message });

/**
 * Starts a worker module given as its URL without extension: the built .js directly; from source
 * (tests, tsx) through tsx's loader, since a worker's entry does not go through the parent's.
 */
export const spawn = (module: URL, data: unknown, options: Omit<WorkerOptions, 'eval' | 'workerData'> = {}): Worker => {
  if (import.meta.url.endsWith('.js')) return new Worker(new URL(`${module.href}.js`), { ...options, workerData: data });
  // tsx's ESM build of its API: the CommonJS one cannot register its loader inside a worker.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const entry = `${module.href}.ts`;
  const boot = `import(${JSON.stringify(tsx)}).then((api) => api.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`;
  return new Worker(boot, { ...options, eval: true, workerData: data });
};

/** One worker thread answering requests in order; an idle one does not keep the process alive. */
export interface WorkerRpc<Req, Res, Info> {
  /** What the worker said once it was set up; rejects when it could not be. */
  readonly ready: Promise<Info>;
  call(request: Req): Promise<Res>;
  /** False once the thread has ended: calls then fail, and a caller may start another. */
  alive(): boolean;
  close(): Promise<void>;
}

export const openWorkerRpc = <Req, Res, Info>(module: URL, data: unknown): WorkerRpc<Req, Res, Info> => {
  const worker = spawn(module, data);
  const pending = new Map<number, { resolve: (v: Res) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let ended: Error | undefined;
  let closing = false;
  let settleReady!: { resolve: (info: Info) => void; reject: (e: Error) => void };
  const ready = new Promise<Info>((resolve, reject) => (settleReady = { resolve, reject }));
  // Setting up (loading a model) holds the process like a call does; an idle thread then does not.
  ready.then(
    () => pending.size === 0 && !closing && worker.unref(),
    () => undefined,
  );
  const end = (error: Error) => {
    ended ??= error;
    settleReady.reject(error);
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  worker.on('message', (reply: Reply<Res>) => {
    if (reply.type === 'ready') return settleReady.resolve(reply.info as Info);
    if (reply.type === 'failed') return end(rethrown(reply.error));
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    // A closing thread holds the process until it has exited, answers in flight or not.
    if (pending.size === 0 && !closing) worker.unref();
    if (reply.type === 'result') waiting?.resolve(reply.result);
    else waiting?.reject(rethrown(reply.error));
  });
  worker.on('error', (error) => end(new UnavailableError(`a worker thread failed: ${error.message}`, { cause: error })));
  worker.on('exit', () => end(new UnavailableError('a worker thread stopped')));
  return {
    ready,
    alive: () => ended === undefined,
    call: (request) =>
      new Promise<Res>((resolve, reject) => {
        if (ended) return reject(ended);
        const id = nextId++;
        pending.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ id, request });
      }),
    // Terminating a thread in the middle of a native call (ONNX Runtime) can abort the process:
    // the worker finishes what it has, releases its state and exits.
    close: async () => {
      if (ended) return;
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      closing = true;
      worker.ref();
      worker.postMessage({ close: true });
      await exited;
    },
  };
};

/**
 * The worker side: sets up from the parent's data, says it is ready (with `info`), then answers
 * each request with `handle`, one at a time. Results' ArrayBuffers listed by `transfer` are moved,
 * not copied. Asked to close, it answers what it was asked first (work that watches its `stopping`
 * signal answers early, with an error), then `release`s its state and exits.
 */
export const serveWorkerRpc = async <Req, Res, State>(
  setup: (data: unknown) => Promise<{ state: State; info: unknown }>,
  /** `stopping` is aborted once the thread is asked to close: long work may end early with an error. */
  handle: (state: State, request: Req, stopping: AbortSignal) => Promise<Res>,
  transfer: (result: Res) => ArrayBuffer[] = () => [],
  release: (state: State) => Promise<void> = () => Promise.resolve(),
): Promise<void> => {
  const port = parentPort!;
  let state: State;
  try {
    const made = await setup(workerData);
    state = made.state;
    port.postMessage({ type: 'ready', info: made.info });
  } catch (error) {
    port.postMessage({ type: 'failed', error: errorOf(error) });
    return;
  }
  let queue = Promise.resolve();
  const stopping = new AbortController();
  port.on('message', ({ id, request, close }: { id: number; request: Req; close?: true }) => {
    if (close) {
      stopping.abort();
      queue = queue.then(() => release(state)).finally(() => process.exit(0));
      return;
    }
    queue = queue.then(async () => {
      try {
        const result = await handle(state, request, stopping.signal);
        port.postMessage({ type: 'result', id, result }, transfer(result));
      } catch (error) {
        port.postMessage({ type: 'error', id, error: errorOf(error) });
      }
    });
  });
};
