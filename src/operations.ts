import type { z } from 'zod';
import { AuthorizationError } from './domain/auth.js';
import type { Actor } from './domain/metadata.js';
import { parseInput } from './validation.js';

export const DEFAULT_PROJECT = 'default';

/** Groups of operations a deployment can choose to expose over MCP. */
export type Toolset = 'ledger' | 'search' | 'jobs' | 'annotations' | 'admin' | 'extensions';

export interface OperationContext {
  actor: Actor;
  correlationId: string;
  /** The project (workspace) the caller works in. */
  project: string;
  /** Long operations report progress here when the caller listens. */
  onProgress?: (progress: Record<string, unknown>) => void;
  /** What an authenticated caller may do; absent when every scope is allowed. */
  scopes?: readonly string[];
}

/**
 * A command or query defined once, with its input and output schemas, and mounted by every
 * transport: as an MCP tool, a CLI verb and an HTTP route.
 */
export interface Operation<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  toolset: Toolset;
  /** True for operations that append events; hidden in read-only mode. */
  writes: boolean;
  /**
   * The scope an authenticated caller needs (e.g. `index:write`); when absent, its group's (see
   * `requiredScope`). An operation that writes declares a write scope here, or in `writeScope`.
   */
  scope?: string;
  /** For an operation some of whose actions only read (and need only `scope`): what its writing actions need; `run` checks it. */
  writeScope?: string;
  /** The text an MCP client shows (e.g. results formatted for an LLM's context); JSON when absent. */
  formatText?: (output: z.output<O>, input: z.output<I>) => string;
  input: I;
  output: O;
  run(input: z.output<I>, context: OperationContext): Promise<z.output<O>>;
  /**
   * For MCP tools whose specification fixes its own error objects: which (seed 004's job errors,
   * seed 003's annotation errors); the MCP surface builds them. Such an operation validates its own
   * input (in `run`), so that bad input is answered in that shape too.
   */
  mcpErrors?: McpErrorObjects;
}

export type McpErrorObjects = 'jobs' | 'annotations';

/** The scope a caller needs to call an operation: its own, or else one that follows from its group and whether it writes. */
export const requiredScope = (operation: Operation): string => {
  if (operation.scope) return operation.scope;
  switch (operation.toolset) {
    // The event ledger and its projections are for administrators (a tenant's admin sees its own events).
    case 'ledger':
    case 'admin':
      return 'admin';
    case 'search':
      return operation.writes ? 'index:write' : 'search:read';
    default:
      return operation.writes ? 'index:write' : 'index:read';
  }
};

/** Refuses a caller without `scope`; a caller whose scopes are not known (authentication off, the CLI) has them all. */
export const checkScope = (context: OperationContext, scope: string) => {
  if (context.scopes && !context.scopes.includes(scope)) throw new AuthorizationError(scope);
};

export const defineOperation = <I extends z.ZodObject, O extends z.ZodObject>(operation: Operation<I, O>) =>
  operation as unknown as Operation;

/**
 * Runs an operation for a caller: a tenant's call runs in its own project, and naming another
 * project is refused; and the input is parsed by the operation's schema unless the operation checks it
 * itself (those with `mcpErrors`).
 */
export const callOperation = (operation: Operation, given: unknown, context: OperationContext) => {
  const { tenant } = context.actor;
  let input = given;
  if (tenant && 'project_id' in operation.input.shape) {
    const named = (given as { project_id?: unknown } | null)?.project_id;
    if (named !== undefined && named !== tenant) {
      const project = typeof named === 'string' ? `'${named}'` : JSON.stringify(named);
      throw new AuthorizationError(undefined, `Credentials of tenant '${tenant}' cannot reach project ${project}`);
    }
    input = { ...(given as object), project_id: tenant };
  }
  return operation.run(operation.mcpErrors ? (input as never) : parseInput(operation.input, input), context);
};
