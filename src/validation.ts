import type { z } from 'zod';
import { describeTextPath, findUnstorableText } from './domain/text.js';
import { ValidationError, describeIssues } from './errors.js';

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

/** Parses input with a slice's schema; bad input becomes one ValidationError listing every issue. */
export const parseInput = <S extends z.ZodType>(schema: S, input: unknown): z.output<S> => {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const issues = describeIssues(parsed.error.issues);
    throw new ValidationError(`Invalid input: ${issues.join('; ')}`, { issues });
  }
  assertStorableText(parsed.data);
  return parsed.data;
};

/** Throws the ValidationError `parseInput` throws for text the ledger cannot store. */
export const assertStorableText = (value: unknown): void => {
  const issue = unstorableTextIssue(value);
  if (!issue) return;
  const line = `${issue.field}: ${issue.message}`;
  throw new ValidationError(`Invalid input: ${line}`, { issues: [line], field: issue.field });
};
