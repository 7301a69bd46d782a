/** The folders ingestion may read (`ingest.roots`): every path a request names is checked against them. */
export interface ReadableRoots {
  /** The folders ingestion may read, absolute. */
  readonly roots: readonly string[];
  /**
   * `given` as an absolute path, resolved against `base` (the working directory by default), when it
   * lies inside a root both as written and with every link followed. Anything else is refused with a
   * ValidationError naming the setting that would allow it; `field` names the input in its details.
   */
  resolve(given: string, options?: { base?: string; field?: string }): string;
}
