import type { z } from 'zod';
import { ValidationError, describeIssues } from './errors.js';

/** Parses input with a slice's schema; bad input becomes one ValidationError listing every issue. */
export const parseInput = <S extends z.ZodType>(schema: S, input: unknown): z.output<S> => {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const issues = describeIssues(parsed.error.issues);
    throw new ValidationError(`Invalid input: ${issues.join('; ')}`, { issues });
  }
  return parsed.data;
};
