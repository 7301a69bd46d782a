import type { SearchFilters } from '../../src/ports/searchIndex.js';

/**
 * A string as a Meilisearch filter value: always double-quoted, with backslashes and quotes
 * escaped, so no value can close the string and add a condition of its own.
 */
export const quoteFilterValue = (value: string): string =>
  `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

const list = (values: readonly string[]) => `[${values.map(quoteFilterValue).join(', ')}]`;

/** Epoch milliseconds of an ISO 8601 time: Meilisearch compares numbers, not dates. */
export const epochMs = (iso: string): number => {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new TypeError(`Not a time: '${iso}'`);
  return ms;
};

/** The port's filters as one Meilisearch filter expression; every tag must be present. */
export const searchFilter = (filters: SearchFilters): string => {
  const conditions = [`project = ${quoteFilterValue(filters.project)}`];
  if (filters.source) conditions.push(`source = ${quoteFilterValue(filters.source)}`);
  for (const tag of filters.tags ?? []) conditions.push(`tags = ${quoteFilterValue(tag)}`);
  if (filters.since) conditions.push(`updated_at >= ${epochMs(filters.since)}`);
  if (filters.until) conditions.push(`updated_at <= ${epochMs(filters.until)}`);
  return conditions.join(' AND ');
};

/** The chunks of these documents that are not among `keep`: what a full replacement leaves behind. */
export const staleChunksFilter = (documentIds: readonly string[], keep: readonly string[]): string =>
  keep.length === 0
    ? `document_id IN ${list(documentIds)}`
    : `document_id IN ${list(documentIds)} AND id NOT IN ${list(keep)}`;
