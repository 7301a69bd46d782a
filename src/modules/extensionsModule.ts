import type { McpServer } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { recordScriptedSourceSync } from '../../commands/extensions/recordScriptedSourceSync.js';
import { syncRemoteConnector } from '../../commands/jobs/syncConnector.js';
import { recordToolCalls } from '../../commands/extensions/recordToolCalls.js';
import type { Agent, RenderedPrompt } from '../../infra/lua/agents.js';
import { createExtensionRegistry } from '../../infra/lua/extensionRegistry.js';
import { syncLuaConnector, type SyncSummary } from '../../infra/lua/luaConnectors.js';
import { BadRequestError } from '../../infra/lua/luaErrors.js';
import { createLuaPool } from '../../infra/lua/luaPool.js';
import type { LuaLimits } from '../../infra/lua/luaRuntime.js';
import { contextToolsFromOperations, loadingHost, scriptHost, type ScriptCaller } from '../../infra/lua/scriptHost.js';
import { createToolCaller, SCRIPT_SCOPE, type ToolCaller } from '../../infra/lua/toolCalls.js';
import { callerContext } from '../http/api/guardOtherSurfaces.js';
import { toolFailure, toolSuccess } from '../mcp/toolResult.js';
import { streamId } from '../domain/events.js';
import { newId } from '../domain/ids.js';
import type { Actor } from '../domain/metadata.js';
import { scriptedSourceStreamKey } from '../domain/tools.js';
import { commandContext } from '../engine/commands.js';
import { NotFoundError, UnavailableError } from '../errors.js';
import type { LedgerModule, ModuleContext, ModuleParts } from '../module.js';
import { checkScope, defineOperation, isTool, type Operation, type OperationSurfaces } from '../operations.js';
import type { ContextTools } from '../ports/contextTools.js';
import type { DocumentSink } from '../ports/documentSink.js';
import { documentSinkFromOperations } from './documentSinkFromOperations.js';
import type { EventStore } from '../ports/eventStore.js';

export interface ExtensionsModuleOptions {
  /** Answers `ctx.search/get/sources`; without it, the search feature's `search`, `get` and `sources` operations. */
  contextTools?: ContextTools;
  /** The ledger's operations, looked up at call time: built-in tools are those of the `search` toolset. */
  operations?: () => readonly Operation[];
  /** Where Lua connectors' documents go. */
  documentSink?: DocumentSink;
}

/** Extra parts this module offers: the Lua tools, to call from other modules. */
export interface ExtensionsParts extends ModuleParts {
  tools: ToolCaller;
}

const bodyObject = (request: FastifyRequest): Record<string, unknown> => {
  const body = request.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new BadRequestError('The request body must be a JSON object');
  return body as Record<string, unknown>;
};

const describeAgent = (agent: Agent) => ({
  name: agent.name,
  description: agent.description,
  tools: agent.tools,
  source: agent.source,
  arguments: agent.arguments,
});

const lastCursor = async (store: EventStore, connector: string): Promise<string | null> => {
  const [last] = await store.readStream(streamId('tool', scriptedSourceStreamKey(connector)), { direction: 'backwards', maxCount: 1 });
  return last?.type === 'ScriptedSourceSynced' ? last.data.cursor : null;
};

const SyncInputSchema = z.object({ name: z.string().min(1).describe('The Lua connector to sync') }).strict();
export const SyncOutputSchema = z.object({
  connector: z.string(),
  pages: z.number().int(),
  documents: z.number().int(),
  created: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
  cursor: z.string().nullable(),
});

type Synced = z.infer<typeof SyncOutputSchema>;

/** `ctx sync NAME`: a Lua connector syncs in the call itself; any other name is a remote connector's. */
const syncSurfaces = {
  name: 'extensions.sync',
  cli: {
    command: ['sync'],
    description: 'sync a connector: a Lua connector, or a remote one (GitHub, …) as a job it follows to the end',
    arguments: [{ name: 'name', field: 'name', description: 'the connector’s name (or a remote connector’s id)' }],
    print: {
      line: (s: Synced) =>
        `synced ${s.connector}: ${s.documents} documents in ${s.pages} pages (${s.created} created, ${s.updated} updated, ${s.unchanged} unchanged)`,
    },
    otherwise: syncRemoteConnector,
  },
} as const satisfies OperationSurfaces;

const ToolResultSchema = z.object({ result: z.unknown() });

const setupExtensions = async (context: ModuleContext, options: ExtensionsModuleOptions): Promise<ExtensionsParts> => {
  const { config, logger, store } = context;
  const settings = config.extensions;
  const limits: LuaLimits = {
    timeoutMs: settings.timeoutMs,
    memoryBytes: Math.round(settings.memoryMb * 1024 * 1024),
    instructionBudget: settings.instructionBudget,
  };
  const operations = options.operations ?? context.operations;
  // Only tools: an operation reached only through its own route is no more a tool here than over MCP or by name.
  const builtins = () => operations().filter((o) => o.toolset === 'search' && isTool(o));
  const lua = createLuaPool({ limits, maxConcurrent: settings.maxConcurrent });
  const registry = createExtensionRegistry({
    folders: settings,
    builtinNames: () => new Set(builtins().map((o) => o.name)),
    host: loadingHost(logger),
    lua,
    onProblem: (problem) => logger.warn(problem, `skipped ${problem.file}: ${problem.message}`),
  });
  const hostFor = (script: string, caller: ScriptCaller) =>
    scriptHost({
      contextTools: options.contextTools ?? contextToolsFromOperations(() => context.features().search, caller),
      caller,
      logger,
      script,
      httpAllowlist: settings.httpAllowlist,
      timeoutMs: settings.timeoutMs,
    });
  const tools = createToolCaller({ registry, builtins, hostFor, lua, recordCalls: (calls) => recordToolCalls(store, calls), logger });

  // The last loaded extensions, for the MCP hook, which must register synchronously.
  let latest = await registry.current();
  const current = async () => (latest = await registry.current());

  const findAgent = async (name: string) => {
    const agent = (await current()).agents.get(name);
    if (!agent) throw new NotFoundError(`No agent named '${name}'`);
    return agent;
  };

  // An agent's prompt runs its script (a Lua agent's), so it needs what running a tool does, on every surface.
  const renderAgent = (agent: Agent, args: Record<string, unknown>, caller: ScriptCaller): Promise<RenderedPrompt> => {
    checkScope(caller, SCRIPT_SCOPE);
    return agent.render(args, hostFor(agent.file, caller), lua);
  };

  const sync = async (name: string, caller: ScriptCaller): Promise<SyncSummary> => {
    const { actor, correlationId } = caller;
    const connector = (await current()).connectors.get(name);
    if (!connector) throw new NotFoundError(`No Lua connector named '${name}'`);
    const sink = options.documentSink ?? documentSinkFromOperations(context.features);
    if (!sink) throw new UnavailableError('Document ingestion is not available');
    return syncLuaConnector({
      connector,
      sink,
      host: hostFor(connector.script.shownAs, caller),
      lua,
      cursor: await lastCursor(store, name),
      onPage: (page) => recordScriptedSourceSync(store, { connector: name, ...page }, commandContext(actor, { correlationId })),
    });
  };

  const syncOperation = defineOperation({
    ...syncSurfaces,
    title: 'Sync a Lua connector',
    description: 'Runs a Lua connector from where its last sync stopped and ingests the documents it returns.',
    toolset: 'extensions',
    writes: true,
    scope: 'index:write',
    input: SyncInputSchema,
    output: SyncOutputSchema,
    run: async ({ name }, caller) => ({ connector: name, ...(await sync(name, caller)) }),
  });

  // Lua tools present at start-up are MCP tools too; each call runs the tool's current script.
  // `tools.call` checks the caller's scope for every Lua tool, whenever it was added.
  const luaToolOperations = [...latest.tools.values()].map((tool) =>
    defineOperation({
      name: tool.name,
      title: tool.name,
      description: tool.description,
      toolset: 'extensions',
      writes: false,
      scope: SCRIPT_SCOPE,
      input: tool.input,
      output: ToolResultSchema,
      run: (input, caller) => tools.call(tool.name, input, caller),
    }),
  );

  const routes = (app: FastifyInstance) => {
    app.get('/tools/list', async () => ({ tools: await tools.list() }));
    app.post<{ Params: { name: string } }>('/tools/:name', async (request) =>
      tools.call(request.params.name, bodyObject(request), callerContext(request, 'tools')),
    );
    app.get('/agents/list', async () => ({ agents: [...(await current()).agents.values()].map(describeAgent) }));
    app.post<{ Params: { name: string } }>('/agents/:name/prompt', async (request) =>
      renderAgent(await findAgent(request.params.name), bodyObject(request), callerContext(request, 'tools')),
    );
  };

  const startupTools = new Set(luaToolOperations.map((o) => o.name));
  const exposesExtensions = (config.mcp.toolsets ?? ['default']).some((t) => ['extensions', 'default', 'all'].includes(t));
  const mcp = (server: McpServer, actor: Actor, scopes: readonly string[] | null) => {
    const caller = (correlationId: string): ScriptCaller => ({ actor, correlationId, ...(scopes ? { scopes } : {}) });
    // Prompts and tools are fixed when the server is built (once per request or connection); refresh for the next one.
    for (const agent of latest.agents.values()) registerAgentPrompt(server, agent, (args) => renderAgent(agent, args, caller(newId())));
    // Tools added since start-up: the ones present then are operations already.
    for (const tool of latest.tools.values()) {
      if (startupTools.has(tool.name) || !exposesExtensions) continue;
      server.registerTool(
        tool.name,
        { title: tool.name, description: tool.description, inputSchema: tool.input, annotations: { readOnlyHint: true } },
        async (input: Record<string, unknown>) => {
          const correlationId = newId();
          try {
            return toolSuccess({ ...(await tools.call(tool.name, input, caller(correlationId))) });
          } catch (error) {
            return toolFailure(error, logger, correlationId);
          }
        },
      );
    }
    current().catch((error: unknown) => logger.error({ err: error }, 'could not reload extensions'));
  };

  return {
    operations: [...luaToolOperations, syncOperation],
    routes,
    mcp: () => Promise.resolve(mcp),
    tools,
    close: async () => {
      registry.close();
      await tools.flush();
      await lua.close();
    },
  };
};

/** An agent as an MCP prompt: its system prompt and messages become the prompt's messages. */
export const registerAgentPrompt = (server: McpServer, agent: Agent, render: (args: Record<string, unknown>) => Promise<RenderedPrompt>) => {
  const argsSchema = z.object(
    Object.fromEntries(
      agent.arguments.map((a) => {
        const field = z.string().describe(a.description);
        return [a.name, a.required ? field : field.optional()];
      }),
    ),
  );
  server.registerPrompt(agent.name, { title: agent.name, description: agent.description, argsSchema }, async (args: Record<string, unknown>) => {
    const rendered = await render(args);
    const messages = [
      ...(rendered.system ? [{ role: 'user' as const, content: { type: 'text' as const, text: rendered.system } }] : []),
      ...rendered.messages.map((m) => ({
        role: m.role === 'assistant' ? ('assistant' as const) : ('user' as const),
        content: { type: 'text' as const, text: m.content },
      })),
    ];
    return { description: agent.description, messages };
  });
};

/** Lua tools, agents and Lua connectors from the configured folders. */
export const createExtensionsModule = (options: ExtensionsModuleOptions = {}): LedgerModule => ({
  name: 'extensions',
  setup: (context) => setupExtensions(context, options),
  surfaces: [syncSurfaces],
});

export const extensionsModule = createExtensionsModule();
