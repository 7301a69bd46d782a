import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { BadRequestError, ScriptLoadError, ToolError } from './luaErrors.js';
import { describeDeclarationProblems, TOOL_NAME_PATTERN } from './luaTools.js';
import type { LuaRunner } from './luaPool.js';
import type { LuaDeclaration, LuaHost } from './luaRuntime.js';
import type { ScriptFile } from './scriptFiles.js';

const MessageSchema = z.object({ role: z.enum(['user', 'assistant', 'system']), content: z.string() }).strict();

export const RenderedPromptSchema = z.object({
  system: z.string(),
  tools: z.array(z.string()),
  messages: z.array(MessageSchema),
});
export type RenderedPrompt = z.infer<typeof RenderedPromptSchema>;

const ArgumentSchema = z
  .object({ name: z.string().min(1), description: z.string().default(''), required: z.boolean().default(false) })
  .strict();
export type AgentArgument = z.infer<typeof ArgumentSchema>;

const emptyTableAsList = (v: unknown) =>
  v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0 ? [] : v;

const AgentHeaderShape = {
  name: z.string().regex(TOOL_NAME_PATTERN, 'must start with a letter and hold only letters, digits, _ and .'),
  description: z.string().default(''),
  tools: z.preprocess(emptyTableAsList, z.array(z.string())).default([]),
  arguments: z.preprocess(emptyTableAsList, z.array(ArgumentSchema)).default([]),
};

const TomlAgentSchema = z
  .object({
    ...AgentHeaderShape,
    system: z.string().default(''),
    messages: z.array(MessageSchema).default([]),
  })
  .strict();

const LuaAgentSchema = z.object(AgentHeaderShape).strict();

export interface Agent {
  name: string;
  description: string;
  tools: string[];
  source: 'toml' | 'lua';
  arguments: AgentArgument[];
  file: string;
  render(args: Record<string, unknown>, host: LuaHost, lua: LuaRunner): Promise<RenderedPrompt>;
}

/** Checks that every required argument is present and non-empty; argument values become strings. */
export const checkArguments = (agent: Pick<Agent, 'name' | 'arguments'>, args: Record<string, unknown>) => {
  const missing = agent.arguments.filter((a) => a.required && (args[a.name] === undefined || args[a.name] === null || args[a.name] === ''));
  if (missing.length > 0) {
    throw new BadRequestError(`Agent '${agent.name}' is missing required argument(s): ${missing.map((a) => a.name).join(', ')}`);
  }
};

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

/** `{{name}}` becomes the argument's value; a placeholder without a value becomes empty. */
export const fillTemplate = (template: string, args: Record<string, unknown>): string =>
  template.replace(PLACEHOLDER, (_, name: string) => {
    const value = args[name];
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  });

export const loadTomlAgent = (script: ScriptFile): Agent => {
  let parsed: unknown;
  try {
    parsed = parseToml(script.source);
  } catch (error) {
    throw new ScriptLoadError(script.shownAs, (error as Error).message);
  }
  const declared = TomlAgentSchema.safeParse(parsed);
  if (!declared.success) throw new ScriptLoadError(script.shownAs, `invalid agent: ${describeDeclarationProblems(declared.error)}`);
  const { system, messages, ...header } = declared.data;
  return {
    ...header,
    source: 'toml',
    file: script.shownAs,
    render: (args) => {
      checkArguments(header, args);
      return Promise.resolve({
        system: fillTemplate(system, args),
        tools: header.tools,
        messages: messages.map((m) => ({ role: m.role, content: fillTemplate(m.content, args) })),
      });
    },
  };
};

export const loadLuaAgent = async (script: ScriptFile, host: LuaHost, lua: LuaRunner): Promise<Agent> => {
  let declaration: LuaDeclaration;
  try {
    declaration = (await lua.run({ source: script.source, chunkName: script.shownAs, kind: 'agent' }, host)) as LuaDeclaration;
  } catch (error) {
    throw new ScriptLoadError(script.shownAs, (error as Error).message);
  }
  if (!declaration.functions.includes('render')) throw new ScriptLoadError(script.shownAs, 'agent.render must be a function');
  const declared = LuaAgentSchema.safeParse(declaration.fields);
  if (!declared.success) throw new ScriptLoadError(script.shownAs, `invalid agent: ${describeDeclarationProblems(declared.error)}`);
  const header = declared.data;
  return {
    ...header,
    source: 'lua',
    file: script.shownAs,
    render: async (args, renderHost, renderLua) => {
      checkArguments(header, args);
      const output = await renderLua.run({ source: script.source, chunkName: script.shownAs, kind: 'agent', entry: 'render', input: args }, renderHost);
      const rendered = RenderedPromptSchema.safeParse({ tools: header.tools, ...(output as object), messages: emptyTableAsList((output as { messages?: unknown })?.messages) ?? [] });
      if (!rendered.success) {
        throw new ToolError(`${script.shownAs}: agent.render returned ${describeDeclarationProblems(rendered.error)}`);
      }
      return rendered.data;
    },
  };
};
