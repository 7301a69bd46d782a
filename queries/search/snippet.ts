const WIDTH = 240;

const terms = (query: string) =>
  query
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((t) => t.length > 2);

/**
 * A window of the text around the first place a query term (or its stem-like prefix) occurs,
 * on word boundaries, with ellipses where it was cut.
 */
export const snippetOf = (text: string, query: string): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= WIDTH) return flat;
  const lower = flat.toLowerCase();
  const hits = terms(query)
    .map((t) => lower.indexOf(t.length > 5 ? t.slice(0, Math.max(5, t.length - 2)) : t))
    .filter((i) => i >= 0);
  const at = hits.length > 0 ? Math.min(...hits) : 0;
  let start = Math.max(0, at - WIDTH / 3);
  if (start > 0) start = flat.indexOf(' ', start) + 1 || start;
  let end = Math.min(flat.length, start + WIDTH);
  if (end < flat.length) end = flat.lastIndexOf(' ', end) > start ? flat.lastIndexOf(' ', end) : end;
  return `${start > 0 ? '…' : ''}${flat.slice(start, end)}${end < flat.length ? '…' : ''}`;
};
