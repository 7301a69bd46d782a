/**
 * The ledger's text rule: no U+0000 and no unpaired UTF-16 surrogate, in any string of an event.
 * Postgres cannot store either in text or jsonb, so one such string would stop every read model
 * that meets its event. Input carrying them is refused; text read from files and connectors is
 * repaired with `toStorableText`.
 */
// eslint-disable-next-line no-control-regex -- NUL is what this looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** Why a string breaks the rule, or null when it keeps it. */
const problemOf = (text: string): string | null => {
  const found = UNSTORABLE.exec(text);
  if (!found) return null;
  return found[0] === '\u0000' ? 'contains a NUL character (U+0000)' : 'contains an unpaired UTF-16 surrogate';
};

export interface UnstorableText {
  /** Where the string is: object keys and array indexes from the value given. */
  path: (string | number)[];
  problem: string;
}

/** The first string (value or object key) in `value` that breaks the text rule, or null. */
export const findUnstorableText = (value: unknown, path: (string | number)[] = []): UnstorableText | null => {
  if (typeof value === 'string') {
    const problem = problemOf(value);
    return problem ? { path, problem } : null;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = findUnstorableText(item, [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const keyProblem = problemOf(key);
      if (keyProblem) return { path: [...path, key], problem: `is a key that ${keyProblem}` };
      const found = findUnstorableText(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
};

/** `value` with every NUL and unpaired surrogate in its strings (and keys) replaced by U+FFFD. */
export const toStorableText = <T>(value: T): T => {
  if (typeof value === 'string') return value.replace(UNSTORABLE_ALL, '\ufffd') as T;
  if (Array.isArray(value)) return value.map((item: unknown) => toStorableText(item)) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [toStorableText(key), toStorableText(item)]),
    ) as T;
  }
  return value;
};

/** `a.b.0`, safe to store itself: a key that breaks the rule is shown repaired. */
export const describeTextPath = (path: readonly (string | number)[]): string =>
  path.length ? toStorableText(path.map(String).join('.')) : '(root)';
