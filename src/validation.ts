import type { z } from 'zod';
import { MAX_JSON_DEPTH, valueNestsDeeperThan } from './domain/nesting.js';
import { describeTextPath, findUnstorableText } from './domain/text.js';
import { ValidationError, describeIssues, type InputIssue } from './errors.js';

export interface TextIssue {
  path: (string | number)[];
  /** `path` as `a.b.0`. */
  field: string;
  message: string;
}

/**
 * The first string in parsed input that the ledger cannot store (NUL, unpaired surrogates), or
 * null. Every input parser refuses such input, each in its surface's shape, so that the text
 * never reaches an event.
 */
export const unstorableTextIssue = (value: unknown): TextIssue | null => {
  const found = findUnstorableText(value);
  if (!found) return null;
  return {
    path: found.path,
    field: describeTextPath(found.path),
    message: `${found.problem}; text may not contain U+0000 or unpaired surrogates`,
  };
};

export const issuesOf = (error: z.ZodError): InputIssue[] =>
  error.issues.map((issue) => ({
    path: issue.path.map((p) => (typeof p === 'number' ? p : String(p))),
    message: issue.message,
    code: issue.code,
  }));

/** The value given at `path`, as text for an error's details ('' when absent). */
const givenAt = (input: unknown, path: readonly (string | number)[]): string => {
  let value: unknown = input;
  for (const key of path) value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
};

/**
 * The one input parser: parses with a slice's schema, and refuses bad input (and text the ledger
 * cannot store) with one ValidationError whose details list every issue, and name the first bad
 * field and the value given for it.
 */
export const parseInput = <S extends z.ZodType>(schema: S, input: unknown): z.output<S> => {
  // Input that did not come through a JSON body's measure (MCP over stdio, the CLI in this process)
  // is measured here: the walks below recurse, and would overflow on it.
  if (valueNestsDeeperThan(input, MAX_JSON_DEPTH)) {
    const message = `nested more than ${MAX_JSON_DEPTH} levels deep`;
    throw new ValidationError(`Invalid input: ${message}`, {
      issues: [{ path: [], message, code: 'too_deep' }],
      field: '(input)',
      value: '',
    });
  }
  const parsed = schema.safeParse(input);
  if (parsed.success) {
    assertStorableText(parsed.data);
    return parsed.data;
  }
  const issues = issuesOf(parsed.error);
  const first = issues[0]?.path ?? [];
  throw new ValidationError(`Invalid input: ${describeIssues(issues).join('; ')}`, {
    issues,
    field: first.map(String).join('.') || '(input)',
    value: givenAt(input, first),
  });
};

/** Throws the ValidationError `parseInput` throws for text the ledger cannot store; the value is left out. */
export const assertStorableText = (value: unknown): void => {
  const issue = unstorableTextIssue(value);
  if (!issue) return;
  throw new ValidationError(`Invalid input: ${issue.field}: ${issue.message}`, {
    issues: [{ path: issue.path, message: issue.message, code: 'invalid_text' }],
    field: issue.field,
    value: '',
  });
};

/** Whether a schema takes a list (through optional, default, a union or a transform's input). */
const takesList = (schema: z.ZodType | undefined): boolean => {
  const def = schema?._zod.def as
    | { type: string; innerType?: z.ZodType; in?: z.ZodType; options?: readonly z.ZodType[] }
    | undefined;
  switch (def?.type) {
    case 'array':
      return true;
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
      return takesList(def.innerType);
    case 'pipe':
      return takesList(def.in);
    case 'union':
      return def.options?.some(takesList) ?? false;
    default:
      return false;
  }
};

/**
 * A query string's fields as input for `schema`: a field of it given more than once
 * (`?limit=1&limit=2`) is refused, naming it, unless the field takes a list.
 */
export const queryFields = (schema: z.ZodObject, query: unknown): Record<string, unknown> => {
  const fields = (query ?? {}) as Record<string, unknown>;
  const shape = schema.shape as Record<string, z.ZodType>;
  for (const [field, value] of Object.entries(fields)) {
    if (!Array.isArray(value) || !(field in shape) || takesList(shape[field])) continue;
    throw new ValidationError(`Invalid input: ${field}: given ${value.length} times; give it once`, {
      issues: [{ path: [field], message: `given ${value.length} times; give it once`, code: 'repeated_field' }],
      field,
      value: value.map(String).join(', '),
    });
  }
  return fields;
};
