import type { z } from 'zod';
import { AuthorizationError, type Credential } from './domain/auth.js';
import type { Actor } from './domain/metadata.js';
import { DEFAULT_PROJECT } from './domain/workspace.js';
import { parseInput } from './validation.js';

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
  /** The API key or token family the caller authenticated with; absent for callers without credentials. */
  credential?: Credential;
  /**
   * The caller reached a server whose authentication is off (over HTTP, on any surface): it is the
   * operator, except for operations that keep it `withinTenant`. The terminal (the CLI, MCP over stdio) is not.
   */
  unauthenticated?: true;
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
  /** For an operation some of whose actions only read (and need only `scope`): what its writing actions need (see `onlyReads`). */
  writeScope?: string;
  /** With a `writeScope`: whether a call (its parsed input) only reads, and so needs only `scope`. */
  onlyReads?(input: z.output<I>): boolean;
  /** It acts on the whole deployment (every tenant's data or settings): only the operator may call it (see `isOperator`; `callOperation` checks it). */
  operatorOnly?: true;
  /**
   * Its caller always acts within a tenant: one that reached a server whose authentication is off,
   * the deployment's default one, rather than as the operator of every tenant (who has no tenant).
   */
  withinTenant?: true;
  /** The text an MCP client shows (e.g. results formatted for an LLM's context); JSON when absent. */
  formatText?(output: z.output<O>, input: z.output<I>): string;
  input: I;
  output: O;
  run(input: z.output<I>, context: OperationContext): Promise<z.output<O>>;
  /** For MCP tools whose specification fixes its own error objects: which; the MCP surface builds them. */
  mcpErrors?: McpErrorObjects;
  /** Its route under `/api/v1`, when it has one. */
  rest?: RestRoute;
  /** False: reached only through its route or verb, not as an MCP tool nor by name (another tool serves it there). */
  tool?: false;
  /** Its `ctx` verbs, when it has some: their callbacks take its input and output. */
  cli?: CliVerb<z.output<I>, z.output<O>> | readonly CliVerb<z.output<I>, z.output<O>>[];
}

/** Requests per minute per user share one budget within a class. */
export type RateClass = 'search' | 'index' | 'connectors' | 'config' | 'auth' | 'admin' | 'read' | 'write';

/**
 * How an operation answers under `/api/v1`. Its input is the body, with the path parameters and
 * the query fields named here added; it answers its output with `status`.
 */
export interface RestRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Below `/api/v1`; a `{name}` segment is a path parameter. */
  path: string;
  summary: string;
  /** Path parameter → the input field it fills, for those not named as the field. */
  params?: Readonly<Record<string, string>>;
  /** Input fields read from the query string. */
  query?: readonly string[];
  /** 200 when absent. */
  status?: number;
  /** The budget it counts against; when absent, the one `rateClassOf` gives; null: not rate limited. */
  rateClass?: RateClass | null;
  /** Answers callers without credentials. */
  anonymous?: true;
  /** The operation's own errors answered as `{error: {code, message}}` rather than in the API's format. */
  errorFormat?: 'tools';
}

/** A positional argument of a verb, filling one input field. */
export interface CliArgument {
  name: string;
  field: string;
  description?: string;
  optional?: boolean;
  /** Takes every remaining word: `words` joins them with spaces. */
  variadic?: true;
  parse?: CliOption['parse'] | 'words';
}

/** An option of a verb, filling one input field (a dotted path fills a nested one). */
export interface CliOption {
  /** As commander writes them: `--as-of <moment>`, `--force`. */
  flags: string;
  field: string;
  description?: string;
  /**
   * How its text becomes the value: a number, a list of each repetition, a JSON file's content, a
   * JSONL file's lines (with `runs`: the operation runs once per batch of lines), a list of scopes (comma- or space-separated, each a known scope), or a list
   * whose items may also be separated by commas.
   */
  parse?: 'number' | 'repeat' | 'json-file' | 'jsonl-file' | 'pairs' | 'scopes' | 'list';
  /** A flag without a value of its own: given, it sets its field to this (`--backwards` → `direction: 'backwards'`). */
  value?: string;
  required?: boolean;
  /** When given, the verb runs this operation instead, with only the arguments, this option and those it `needs`. */
  runs?: string;
  /** The fields of other options this one cannot go without; they go along to the operation it `runs`. */
  needs?: readonly string[];
  /** How the operation it `runs` shows at the terminal, when that operation declares no verb of its own. */
  shows?: Pick<CliVerb, 'print' | 'progress' | 'settles' | 'shown'>;
  choices?: readonly string[];
  default?: string | number | boolean;
}

/**
 * A callback a slice types by what it is given (its operation's input or output, the status it
 * follows). Its parameters are bivariant, so that one catalogue holds operations of every type and
 * the CLI calls each with what its operation answers.
 */
export type CliCallback<Args extends unknown[], Result> = { bivarianceHack(...args: Args): Result }['bivarianceHack'];

/** A plain JSON object, as an operation's input or output reaches the CLI. */
type Fields = Record<string, unknown>;

/** A cell or line of printed output: `{field}` placeholders (dotted paths, lists joined), or a function of the value (null: a field left out). */
export type CliText = string | CliCallback<[value: unknown], string | null>;

/** How a verb prints its result without `--json` (which prints it as snake_case JSON). */
export type CliPrint =
  | {
      fields: Readonly<Record<string, CliText>>;
      /** Lines printed above the fields (e.g. a secret shown once, and a warning saying so). */
      above?: CliText;
    }
  | {
      table: {
        /** The output field holding the rows; the output itself when absent. */
        rows?: string;
        columns: Readonly<Record<string, CliText>>;
        empty: string;
        /** The output field holding the next page's cursor. */
        cursor?: string;
        /** Lines under the table, when it has some to add (how to see more, events it skipped). */
        more?: CliCallback<[shown: unknown], string | undefined>;
      };
    }
  | { line: CliText };

/** How an operation is run from `ctx`. */
export interface CliVerb<I = Fields, O = Fields> {
  /** The command words: `['annotations', 'rename']` is `ctx annotations rename`. */
  command: readonly string[];
  description: string;
  arguments?: readonly CliArgument[];
  options?: readonly CliOption[];
  print: CliPrint;
  /**
   * A query run in this process first waits until the read models it reads have applied every event
   * so far: those named (for its input), or with `true` every one but the semantic index.
   */
  catchUp?: true | string | readonly string[] | CliCallback<[input: I], readonly string[]>;
  /** The input field asking for a past moment: given, the live read models need not catch up. */
  asOfField?: string;
  /** The line showing the operation's progress while it runs in this process. */
  progress?: CliCallback<[progress: object, input: I], string>;
  /** A write whose answer waits until the read models have applied it, so that the next command finds it. */
  settles?: true;
  /** Completes the input at the terminal (e.g. paths resolved from the working directory). */
  prepare?: (input: Record<string, unknown>) => Record<string, unknown>;
  /** What is printed of the result, as text and as JSON; the result itself when absent. */
  shown?: CliCallback<[output: O, input: I], unknown>;
  /** Runs the operation once per page, following this cursor, and answers every page's items as one. */
  allPages?: { items: string; cursor: string; input: string };
  /** An option that, once the operation has answered, follows what it started until it ends. */
  follow?: CliFollow<O>;
  /** What the verb runs when its operation finds nothing by the name given. */
  otherwise?: CliOtherwise<I>;
}

/** Polls an operation with a progress line until its answer says the work has ended; prints that last answer. */
export interface CliFollow<Started = Fields, Status = Fields> {
  flags: string;
  description: string;
  /** Follows in this process by running the ledger's background work here, as a server does. */
  operation: string;
  input: CliCallback<[started: Started], Fields>;
  progress: CliCallback<[status: Status], string>;
  done: CliCallback<[status: Status], boolean>;
  /** An ending that is not a success makes the exit code 1. */
  failed: CliCallback<[status: Status], boolean>;
  /** What is printed of the last status, knowing the operation's answer; the status itself when absent. */
  shown?: CliCallback<[status: Status, started: Started], unknown>;
  print: CliPrint;
}

/** Another operation, for names the verb's own does not know (another kind of connector): it starts work the verb follows to its end. */
export interface CliOtherwise<I = Fields> {
  operation: string;
  /** Its input, from the verb's. */
  input: CliCallback<[input: I], Fields>;
  /** The message when neither operation knows the name. */
  notFound: CliCallback<[input: I], string>;
  follow: Omit<CliFollow, 'flags' | 'description'>;
}

/** What an operation shows each surface, known before any ledger opens: the CLI builds its verbs from it. */
export type OperationSurfaces = Pick<Operation, 'name' | 'rest' | 'cli'>;

/** What guards and documents an operation's route, known before any ledger opens: `/api/v1`'s route table is built from it. */
export type RouteSurfaces = OperationSurfaces &
  Pick<Operation, 'toolset' | 'writes' | 'scope' | 'input' | 'output' | 'tool' | 'withinTenant'> & { rest: RestRoute };

type Guarded = Pick<Operation, 'toolset' | 'writes' | 'scope' | 'rest'>;

/**
 * Routes of operations share the API's budgets: searches as search, the ledger's as admin. Index
 * control declares the seed's small `index` budget; other writes (ingest batches, annotations an
 * agent makes one by one) share a budget sized for work, not for control.
 */
export const rateClassOf = (operation: Guarded): RateClass => {
  if (operation.rest?.rateClass) return operation.rest.rateClass;
  if (operation.toolset === 'admin' || operation.toolset === 'ledger') return 'admin';
  if (operation.writes) return 'write';
  return operation.toolset === 'search' ? 'search' : 'read';
};

/** Whether an operation is offered as an MCP tool and by name. */
export const isTool = (operation: Operation) => operation.tool !== false;

/**
 * The operation of the catalogue named `name`, for surfaces that dispatch on a name their caller
 * gives (the operations route, the CLI's `run`, Lua's tool calls). Features never look each other up
 * by name: they use the typed APIs of the module context.
 */
export const operationNamed = (operations: readonly Operation[], name: string): Operation | undefined =>
  operations.find((o) => o.name === name);

/**
 * Error objects a specification fixes for its MCP tools: the job tools' and the annotation tools'
 * (these tools check their own input, so that bad input is answered in that shape too), and the
 * tool API's (`{error: {code, message}}` with its lowercase codes). The MCP surface builds them.
 */
export type McpErrorObjects = 'jobs' | 'annotations' | 'tools';

/** Whether an operation parses its own input (its errors then name what its specification asks). */
const parsesOwnInput = (operation: Pick<Operation, 'mcpErrors'>) => operation.mcpErrors === 'jobs' || operation.mcpErrors === 'annotations';

/** The scope a caller needs to call an operation: its own, or else one that follows from its group and whether it writes. */
export const requiredScope = (operation: Guarded): string => {
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
export const checkScope = (context: Pick<OperationContext, 'scopes'>, scope: string) => {
  if (context.scopes && !context.scopes.includes(scope)) throw new AuthorizationError(scope);
};

/**
 * The operator runs the deployment, for every tenant: a caller without a tenant (the CLI on the data
 * directory, anyone reaching a server whose authentication is off), or a caller of the `default`
 * tenant with the `admin` scope.
 */
export const isOperator = (context: Pick<OperationContext, 'actor' | 'scopes'>): boolean =>
  context.actor.tenant === null ||
  (context.actor.tenant === DEFAULT_PROJECT && (!context.scopes || context.scopes.includes('admin')));

/** What being the operator takes, as refusals name it. */
export const OPERATOR_NEEDED = `the operator: an 'admin' key or token of the '${DEFAULT_PROJECT}' tenant`;

/** Refuses a caller who is not the operator; `what` says what needs one. */
export const checkOperator = (context: Pick<OperationContext, 'actor' | 'scopes'>, what: string) => {
  if (!isOperator(context)) throw new AuthorizationError(undefined, `${what} needs ${OPERATOR_NEEDED}`);
};

/** An operation of the catalogue, its input and output types kept. */
export const defineOperation = <I extends z.ZodObject, O extends z.ZodObject>(operation: Operation<I, O>): Operation<I, O> =>
  operation;

/** How `callOperation` is called. */
export interface CallOptions {
  /**
   * Set where an operation (or a feature's typed API) runs another as part of its own work, for its
   * caller: the caller's scopes were checked for the outer operation, which decides what it runs
   * (index control starting a connector's sync, related information listing the project's jobs),
   * and the input is the code's own, typed, not a caller's to parse.
   */
  onBehalf?: true;
  /** Parses the input in place of `parseInput`, for a surface whose specification words bad input its own way (the tool API's). */
  parse?: (schema: z.ZodObject, input: unknown) => unknown;
}

/** Keeps a tenant's call in its own project: naming another project is refused. */
const inTenantProject = (operation: Pick<Operation, 'input'>, given: unknown, tenant: string | null): unknown => {
  if (!tenant || !('project_id' in operation.input.shape)) return given;
  const named = (given as { project_id?: unknown } | null)?.project_id;
  if (named !== undefined && named !== tenant) {
    const project = typeof named === 'string' ? `'${named}'` : JSON.stringify(named);
    throw new AuthorizationError(undefined, `Credentials of tenant '${tenant}' cannot reach project ${project}`);
  }
  return { ...(given as object), project_id: tenant };
};

/**
 * The one way to run an operation, and the one access check every surface (MCP, the tool API,
 * `/api/v1`, the CLI, Lua) and every in-process caller passes: the caller needs the operation's
 * scope (`requiredScope`, and its `writeScope` for a call that does not only read); a tenant's call
 * runs in its own project, and naming another project is refused (a caller without authentication
 * acts in the default tenant where the operation is `withinTenant`); the input is parsed by the
 * operation's schema unless the operation checks it itself (those with the job tools' or the
 * annotation tools' error objects); and an `operatorOnly` operation refuses every caller but the
 * operator. Surfaces only find the caller and answer refusals in their own format.
 */
export const callOperation = async <I extends z.ZodObject, O extends z.ZodObject>(
  operation: Operation<I, O>,
  given: unknown,
  context: OperationContext,
  { onBehalf, parse = parseInput }: CallOptions = {},
): Promise<z.output<O>> => {
  if (!onBehalf) checkScope(context, requiredScope(operation));
  const caller =
    operation.withinTenant && context.unauthenticated && context.actor.tenant === null
      ? { ...context, actor: { ...context.actor, tenant: DEFAULT_PROJECT } }
      : context;
  const input = inTenantProject(operation, given, caller.actor.tenant);
  const parsed = onBehalf || parsesOwnInput(operation) ? input : parse(operation.input, input);
  if (operation.writeScope && !onBehalf && !operation.onlyReads?.(parsed as z.output<I>))
    checkScope(context, operation.writeScope);
  if (operation.operatorOnly) checkOperator(caller, `'${operation.name}' acts on every tenant and`);
  return operation.run(parsed as z.output<I>, caller);
};
