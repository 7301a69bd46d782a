import { callOperation, checkScope, type Operation, type OperationContext } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import type { ContextSearchOptions, ContextTools } from '../../src/ports/contextTools.js';
import type { Logger } from '../../src/ports/logger.js';
import type { LuaHost } from './luaRuntime.js';

/** Who runs a script: `ctx.search`, `ctx.get` and `ctx.sources` answer with this caller's rights. */
export type ScriptCaller = Pick<OperationContext, 'actor' | 'correlationId' | 'scopes'>;

/** What `ctx.search`, `ctx.get` and `ctx.sources` need, as the `/tools` routes and MCP tools they mirror. */
export const CONTEXT_SCOPE = 'search:read';

const MAX_HTTP_BODY_BYTES = 1024 * 1024;

/** The search feature's operations the context tools call. */
export interface ContextOperations {
  rank: Operation;
  get: Operation;
  sources: Operation;
}

/**
 * Context tools answered by the search feature's `search`, `get` and `sources` operations for the
 * caller (its tenant's project only), looked up at call time so that the module providing them may be
 * wired in after this one.
 */
export const contextToolsFromOperations = (
  operations: () => ContextOperations | undefined,
  caller: ScriptCaller,
): ContextTools => {
  const context: OperationContext = { ...caller, project: caller.actor.tenant ?? DEFAULT_PROJECT };
  const run = async (which: keyof ContextOperations, name: string, input: Record<string, unknown>) => {
    const operation = operations()?.[which];
    if (!operation) throw new Error(`${name} is not available`);
    return callOperation(operation, input, context);
  };
  return {
    search: (query, options) => run('rank', 'search', { query, ...options }),
    get: (id) => run('get', 'get', { id }),
    sources: () => run('sources', 'sources', {}),
  };
};

const searchOptions = (options: Record<string, unknown>): ContextSearchOptions => {
  const picked: ContextSearchOptions = {};
  if (options.mode !== undefined) picked.mode = options.mode as ContextSearchOptions['mode'];
  if (options.limit !== undefined) picked.limit = options.limit as number;
  if (options.source !== undefined) picked.source = options.source as string;
  return picked;
};

const allowedHost = (allowlist: readonly string[], url: URL) =>
  allowlist.includes(url.host) || (url.port === '' && allowlist.includes(url.hostname));

/** GET on allow-listed hosts only; redirects are not followed, so they cannot leave the list. */
const httpGetFor =
  (allowlist: readonly string[], timeoutMs: number) =>
  async (target: unknown, options: Record<string, unknown>) => {
    if (typeof target !== 'string') throw new Error('http.get expects a URL string');
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new Error(`invalid URL '${target}'`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('only http and https URLs are allowed');
    if (!allowedHost(allowlist, url)) throw new Error(`host '${url.host}' is not in the HTTP allow-list`);
    const headers = (options.headers ?? {}) as Record<string, string>;
    const response = await fetch(url, { headers, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    const body = await response.text();
    if (Buffer.byteLength(body) > MAX_HTTP_BODY_BYTES) throw new Error(`response larger than ${MAX_HTTP_BODY_BYTES} bytes`);
    return { status: response.status, body };
  };

export interface ScriptHostOptions {
  contextTools: ContextTools;
  caller: ScriptCaller;
  logger: Logger;
  /** Names the script in log lines. */
  script: string;
  httpAllowlist: readonly string[];
  timeoutMs: number;
}

/** The host functions one script call sees as `ctx`; context queries need the caller's CONTEXT_SCOPE. */
export const scriptHost = ({ contextTools, caller, logger, script, httpAllowlist, timeoutMs }: ScriptHostOptions): LuaHost => ({
  search: async (query, options) => {
    checkScope(caller, CONTEXT_SCOPE);
    if (typeof query !== 'string' || query.length === 0) throw new Error('search expects a query string');
    return contextTools.search(query, searchOptions(options));
  },
  get: async (id) => {
    checkScope(caller, CONTEXT_SCOPE);
    if (typeof id !== 'string') throw new Error('get expects an id string');
    return contextTools.get(id);
  },
  sources: async () => {
    checkScope(caller, CONTEXT_SCOPE);
    return contextTools.sources();
  },
  log: (line) => logger.info({ script }, line),
  ...(httpAllowlist.length > 0 ? { httpGet: httpGetFor(httpAllowlist, timeoutMs) } : {}),
});

/** A host for loading scripts: their top level only declares, so every context call fails. */
export const loadingHost = (logger: Logger): LuaHost => {
  const unavailable = () => Promise.reject(new Error('context queries are not available while a script loads'));
  return { search: unavailable, get: unavailable, sources: unavailable, log: (line) => logger.info({}, line) };
};
