/** An absolute file path in a message: after the start, a space, a quote, a bracket or `=`, so that URLs stay whole. */
const ABSOLUTE_PATH = /(^|[\s'"`(=[])(\/[^\s'"`()[\],;]+)/g;

/**
 * A message for callers, with each absolute path cut to its last name: the reason a job is blocked
 * says what is wrong (a model's weights, a database file) without naming where the product or its
 * data lie on the server. The log keeps the whole message.
 */
export const withoutPaths = (message: string): string =>
  message.replace(ABSOLUTE_PATH, (_match, before: string, file: string) => `${before}${file.split('/').filter(Boolean).at(-1) ?? '/'}`);
