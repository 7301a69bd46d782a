import { z } from 'zod';

export const ToolCallOutcomeSchema = z.enum(['ok', 'tool_error', 'timeout', 'bad_request']);
export type ToolCallOutcome = z.infer<typeof ToolCallOutcomeSchema>;

/** One call of a tool, kept so administrators can see what agents ran; parameters only as a hash. */
export const ToolCalledSchema = z.object({
  type: z.literal('ToolCalled'),
  schemaVersion: z.literal(1),
  data: z.object({
    tool: z.string().min(1),
    builtin: z.boolean(),
    /** `<via>:<subject>` of the actor that called it. */
    caller: z.string().min(1),
    /** sha256 of the parameters as canonical JSON. */
    paramsHash: z.string().regex(/^[0-9a-f]{64}$/),
    durationMs: z.number().nonnegative(),
    outcome: ToolCallOutcomeSchema,
  }),
});

export type ToolCalled = z.infer<typeof ToolCalledSchema>;

/** A page of documents a Lua connector returned and handed to ingestion; `cursor` is where the next sync resumes. */
export const ScriptedSourceSyncedSchema = z.object({
  type: z.literal('ScriptedSourceSynced'),
  schemaVersion: z.literal(1),
  data: z.object({
    connector: z.string().min(1),
    cursor: z.string().nullable(),
    documents: z.number().int().nonnegative(),
    created: z.number().int().nonnegative(),
    updated: z.number().int().nonnegative(),
    unchanged: z.number().int().nonnegative(),
  }),
});

export type ScriptedSourceSynced = z.infer<typeof ScriptedSourceSyncedSchema>;

export const ToolEventSchemas = [ToolCalledSchema, ScriptedSourceSyncedSchema] as const;

/** Tool calls are kept per tool; a connector's sync pages in a stream of their own beside them. */
export const toolStreamKey = (tool: string): string => tool;
export const scriptedSourceStreamKey = (connector: string): string => `connector:${connector}`;
