import { z } from 'zod';

/** The JSON-Schema-like subset a tool may declare for its parameters. */
export interface ParameterSchema {
  type: 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object';
  description?: string;
  enum?: (string | number)[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  items?: ParameterSchema;
  properties?: Record<string, ParameterSchema>;
  required?: string[];
}

export type ObjectParameters = ParameterSchema & { type: 'object'; properties: Record<string, ParameterSchema>; required: string[] };

// Lua has one table type: an empty `{}` arrives as an object where a list was meant.
const list = <T extends z.ZodType>(item: T) =>
  z.preprocess((v) => (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0 ? [] : v), z.array(item));

export const ParameterSchemaSchema: z.ZodType<ParameterSchema> = z.lazy(() =>
  z
    .object({
      type: z.enum(['string', 'number', 'integer', 'boolean', 'array', 'object']),
      description: z.string().optional(),
      enum: list(z.union([z.string(), z.number()])).optional(),
      default: z.unknown().optional(),
      minimum: z.number().optional(),
      maximum: z.number().optional(),
      minLength: z.number().int().nonnegative().optional(),
      maxLength: z.number().int().nonnegative().optional(),
      items: ParameterSchemaSchema.optional(),
      properties: z.record(z.string(), ParameterSchemaSchema).optional(),
      required: list(z.string()).optional(),
    })
    .strict(),
);

/** A tool's `parameters`: an object schema; `properties` and `required` default to empty. */
export const ObjectParametersSchema = z
  .preprocess((v) => v ?? { type: 'object' }, ParameterSchemaSchema)
  .refine((p) => p.type === 'object', 'parameters must have type "object"')
  .refine((p) => (p.required ?? []).every((name) => p.properties?.[name]), 'every required parameter must be declared in properties')
  .transform((p): ObjectParameters => ({ ...p, type: 'object', properties: p.properties ?? {}, required: p.required ?? [] }));

const withBounds = <T extends z.ZodString | z.ZodNumber>(schema: T, min?: number, max?: number): T => {
  let bounded = schema;
  if (min !== undefined) bounded = bounded.min(min) as T;
  if (max !== undefined) bounded = bounded.max(max) as T;
  return bounded;
};

const toZod = (schema: ParameterSchema): z.ZodType => {
  let converted: z.ZodType;
  if (schema.enum && schema.enum.length > 0) {
    const literals = schema.enum.map((value) => z.literal(value));
    converted = literals.length === 1 ? literals[0]! : z.union(literals as unknown as [z.ZodLiteral, z.ZodLiteral]);
  } else {
    switch (schema.type) {
      case 'string':
        converted = withBounds(z.string(), schema.minLength, schema.maxLength);
        break;
      case 'number':
        converted = withBounds(z.number(), schema.minimum, schema.maximum);
        break;
      case 'integer':
        converted = withBounds(z.number().int(), schema.minimum, schema.maximum);
        break;
      case 'boolean':
        converted = z.boolean();
        break;
      case 'array':
        converted = z.array(schema.items ? toZod(schema.items) : z.unknown());
        break;
      case 'object':
        converted = objectToZod(schema);
        break;
    }
  }
  if (schema.description) converted = converted.describe(schema.description);
  return converted;
};

const objectToZod = (schema: ParameterSchema): z.ZodObject => {
  const required = new Set(schema.required ?? []);
  const shape = Object.fromEntries(
    Object.entries(schema.properties ?? {}).map(([name, property]) => {
      const converted = toZod(property);
      if (property.default !== undefined) return [name, converted.default(property.default as never)];
      return [name, required.has(name) ? converted : converted.optional()];
    }),
  );
  return z.object(shape);
};

/** The zod schema that validates a call's parameters against what the tool declares. */
export const parametersToZod = (parameters: ObjectParameters): z.ZodObject => objectToZod(parameters);

/** Arguments nest at most this deep: the copy into Lua, and the hash of a call, recurse once per level. */
export const MAX_ARGUMENT_DEPTH = 64;

/** True when `value` has arrays or objects nested more than `limit` levels deep; walks without recursing. */
export const nestedDeeperThan = (value: unknown, limit: number): boolean => {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (next.value === null || typeof next.value !== 'object') continue;
    if (next.depth >= limit) return true;
    for (const item of Object.values(next.value)) pending.push({ value: item, depth: next.depth + 1 });
  }
  return false;
};
