/**
 * Content-addressed text: document bodies and chunk texts, keyed by the sha256 of their UTF-8
 * bytes. Writing the same text twice stores it once. Events refer to content by hash only.
 */
export interface ContentStore {
  /** Stores texts; resolves to their hashes, in input order. */
  put(texts: readonly string[]): Promise<string[]>;
  /** Texts by hash; a hash that is unknown (or forgotten) is missing from the map. */
  get(hashes: readonly string[]): Promise<Map<string, string>>;
}
