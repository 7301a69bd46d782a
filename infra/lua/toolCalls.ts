import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ToolCallOutcome, ToolCalled } from '../../src/domain/tools.js';
import { AuthorizationError } from '../../src/domain/auth.js';
import { commandContext, type Recorded } from '../../src/engine/commands.js';
import { AppError, NotFoundError, UnavailableError, ValidationError, describeIssues } from '../../src/errors.js';
import { callOperation, checkScope, operationNamed, type Operation, type OperationContext } from '../../src/operations.js';
import { DEFAULT_PROJECT } from '../../src/domain/workspace.js';
import type { Logger } from '../../src/ports/logger.js';
import { unstorableTextIssue } from '../../src/validation.js';
import type { ExtensionRegistry } from './extensionRegistry.js';
import { BadRequestError, ToolError, ToolTimeoutError } from './luaErrors.js';
import type { LuaRunner } from './luaPool.js';
import type { LuaHost } from './luaRuntime.js';
import { MAX_ARGUMENT_DEPTH, nestedDeeperThan } from './toolParameters.js';

export interface ToolDescription {
  name: string;
  description: string;
  builtin: boolean;
  parameters: Record<string, unknown>;
}

/**
 * What running a Lua script (a tool, an agent's prompt, a connector's sync) needs, on every surface:
 * scripts are the deployment's own code, run with the server's resources.
 */
export const SCRIPT_SCOPE = 'index:write';

/** Who calls a tool: identity, project and, when authenticated, scopes and the credential (tokens it issues belong to it). */
export type ToolCallContext = Pick<OperationContext, 'actor' | 'correlationId' | 'scopes' | 'credential'>;

export interface ToolCaller {
  list(): Promise<ToolDescription[]>;
  /** Checks the caller's scope for the tool (the built-in's own, or SCRIPT_SCOPE) when it is called, whatever the surface. */
  call(name: string, params: unknown, context: ToolCallContext): Promise<{ result: unknown }>;
  /** Resolves once every call made so far is recorded. */
  flush(): Promise<void>;
}

export interface ToolCallerOptions {
  registry: ExtensionRegistry;
  builtins: () => readonly Operation[];
  hostFor: (script: string, caller: ToolCallContext) => LuaHost;
  lua: LuaRunner;
  /** Records finished calls (through their command); called off the request path, in batches. */
  recordCalls: (calls: readonly Recorded<ToolCalled>[]) => Promise<void>;
  logger: Logger;
}

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, canonical(v)]));
  }
  return value;
};

export const paramsHash = (params: unknown): string =>
  createHash('sha256').update(JSON.stringify(canonical(params ?? {}))).digest('hex');

const outcomeOf = (error: unknown): ToolCallOutcome | null => {
  if (error instanceof ToolTimeoutError) return 'timeout';
  if (error instanceof BadRequestError || error instanceof ValidationError) return 'bad_request';
  // Not run at all: nothing to record.
  if (error instanceof NotFoundError || error instanceof UnavailableError || error instanceof AuthorizationError) return null;
  return 'tool_error';
};

const parseParams = (schema: z.ZodType, params: unknown, tool: string) => {
  if (params === undefined || params === null) params = {};
  if (typeof params !== 'object' || Array.isArray(params)) throw new BadRequestError(`Parameters of '${tool}' must be a JSON object`);
  const parsed = schema.safeParse(params);
  if (!parsed.success) {
    const issues = describeIssues(parsed.error.issues);
    throw new BadRequestError(`Invalid parameters for '${tool}': ${issues.join('; ')}`, { issues });
  }
  const text = unstorableTextIssue(parsed.data);
  if (text) {
    const issues = [`${text.field}: ${text.message}`];
    throw new BadRequestError(`Invalid parameters for '${tool}': ${issues[0]}`, { issues });
  }
  return parsed.data as Record<string, unknown>;
};

const assertShallow = (params: unknown, tool: string) => {
  if (nestedDeeperThan(params, MAX_ARGUMENT_DEPTH)) {
    throw new BadRequestError(`Parameters of '${tool}' are nested more than ${MAX_ARGUMENT_DEPTH} levels deep`);
  }
};

const inputJsonSchema = (operation: Operation): Record<string, unknown> => {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(operation.input, { io: 'input', unrepresentable: 'any' });
  // The tool API lists `required` on every tool, empty when nothing is.
  return { ...schema, required: schema.required ?? [] };
};

/** Lists and calls tools (built-in operations and Lua scripts), recording each call. */
export const createToolCaller = ({ registry, builtins, hostFor, lua, recordCalls, logger }: ToolCallerOptions): ToolCaller => {
  // Calls are recorded off the request path: queued, then handed over in one batch.
  const queue: Recorded<ToolCalled>[] = [];
  let flushing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    flushing = flushing.then(async () => {
      const batch = queue.splice(0);
      await recordCalls(batch).catch((error: unknown) => {
        logger.error({ err: error, calls: batch.length }, 'could not record tool calls');
      });
    });
    return flushing;
  };
  const record = (tool: string, builtin: boolean, { actor, correlationId }: ToolCallContext, params: unknown, startedAt: number, outcome: ToolCallOutcome) => {
    queue.push({
      event: {
        type: 'ToolCalled',
        schemaVersion: 1,
        data: {
          tool,
          builtin,
          caller: `${actor.via}:${actor.subject}`,
          paramsHash: paramsHash(params),
          durationMs: Math.max(0, performance.now() - startedAt),
          outcome,
        },
      },
      context: commandContext(actor, { correlationId, project: actor.tenant ?? DEFAULT_PROJECT }),
    });
    if (queue.length === 1) void flush();
  };

  const runTool = async (name: string, params: unknown, caller: ToolCallContext) => {
    const builtin = operationNamed(builtins(), name);
    if (builtin) {
      const context = { ...caller, project: caller.actor.tenant ?? DEFAULT_PROJECT };
      const parse = (schema: z.ZodType, input: unknown) => parseParams(schema, input, name);
      return { builtin: true, result: (await callOperation(builtin, params, context, { parse })) as unknown };
    }
    checkScope(caller, SCRIPT_SCOPE);
    const tool = (await registry.current()).tools.get(name);
    if (!tool) throw new NotFoundError(`No tool named '${name}'`);
    const input = parseParams(tool.input, params, name);
    const job = { source: tool.script.source, chunkName: tool.script.shownAs, kind: 'tool' as const, entry: 'execute', input };
    return { builtin: false, result: await lua.run(job, hostFor(tool.script.shownAs, caller)) };
  };

  return {
    flush,
    list: async () => {
      const { tools } = await registry.current();
      return [
        ...builtins().map((o) => ({ name: o.name, description: o.description, builtin: true, parameters: inputJsonSchema(o) })),
        ...[...tools.values()].map((t) => ({ name: t.name, description: t.description, builtin: false, parameters: { ...t.parameters } })),
      ];
    },
    call: async (name, params, caller) => {
      const startedAt = performance.now();
      const builtin = builtins().some((o) => o.name === name);
      // Before anything walks them recursively, the hash of the recorded call included.
      assertShallow(params, name);
      try {
        const { result } = await runTool(name, params, caller);
        record(name, builtin, caller, params, startedAt, 'ok');
        return { result };
      } catch (error) {
        const outcome = outcomeOf(error);
        if (outcome) record(name, builtin, caller, params, startedAt, outcome);
        if (error instanceof ValidationError) throw new BadRequestError(error.message, error.details);
        if (error instanceof AppError) throw error;
        // A built-in's unexpected failure stays masked by the transport's error mapping.
        if (builtin) throw error;
        throw new ToolError((error as Error).message);
      }
    },
  };
};
