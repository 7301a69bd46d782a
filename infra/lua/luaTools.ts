import { z } from 'zod';
import { describeIssues } from '../../src/errors.js';
import { ScriptLoadError } from './luaErrors.js';
import type { LuaRunner } from './luaPool.js';
import type { LuaDeclaration, LuaHost } from './luaRuntime.js';
import type { ScriptFile } from './scriptFiles.js';
import { ObjectParametersSchema, parametersToZod, type ObjectParameters } from './toolParameters.js';

/** Tool names: letters, digits, `_` and `.`; no `-` or `:` (those separate stream ids). */
export const TOOL_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/;

export interface LuaTool {
  name: string;
  description: string;
  parameters: ObjectParameters;
  /** Validates a call's parameters (applying declared defaults). */
  input: z.ZodObject;
  script: ScriptFile;
}

const ToolDeclarationSchema = z
  .object({
    name: z.string().regex(TOOL_NAME_PATTERN, 'must start with a letter and hold only letters, digits, _ and .'),
    description: z.string().min(1),
    parameters: ObjectParametersSchema,
  })
  .strict();

export const describeDeclarationProblems = (error: z.ZodError) => describeIssues(error.issues).join('; ');

/** Runs the script's top level and checks what it declares; throws ScriptLoadError naming the file. */
export const loadLuaTool = async (script: ScriptFile, host: LuaHost, lua: LuaRunner): Promise<LuaTool> => {
  let declaration: LuaDeclaration;
  try {
    declaration = (await lua.run({ source: script.source, chunkName: script.shownAs, kind: 'tool' }, host)) as LuaDeclaration;
  } catch (error) {
    throw new ScriptLoadError(script.shownAs, (error as Error).message);
  }
  if (!declaration.functions.includes('execute')) throw new ScriptLoadError(script.shownAs, 'tool.execute must be a function');
  const parsed = ToolDeclarationSchema.safeParse(declaration.fields);
  if (!parsed.success) throw new ScriptLoadError(script.shownAs, `invalid tool declaration: ${describeDeclarationProblems(parsed.error)}`);
  const { name, description, parameters } = parsed.data;
  return { name, description, parameters, input: parametersToZod(parameters), script };
};
